import { z } from 'zod';

const contentPart = z.looseObject({ type: z.string(), text: z.string().optional() });

/** The part of an OpenAI chat-completions request the simulator reads; other fields are accepted and ignored. */
export const ChatRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z
    .array(
      z.looseObject({
        role: z.string().min(1),
        content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
      }),
    )
    .min(1),
  max_tokens: z.number().int().positive().optional(),
  max_completion_tokens: z.number().int().positive().optional(),
});
export type ChatRequest = z.infer<typeof ChatRequestSchema>;

const quota = z.number().int().nonnegative();

/** `POST /admin/capacity`: a new quota, either or both. */
export const CapacitySchema = z
  .strictObject({ tpm: quota.optional(), rpm: quota.optional() })
  .refine((q) => q.tpm !== undefined || q.rpm !== undefined, { message: 'give tpm, rpm or both' });

/** `POST /admin/spend-cap`: switch the hard spend cap on or off. */
export const SpendCapSchema = z.strictObject({ enabled: z.boolean() });

/** Each zod issue as `{path, message}`, for the `details` of a 400. */
export function issueDetails(error: z.ZodError): Array<{ path: string; message: string }> {
  return error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
}
