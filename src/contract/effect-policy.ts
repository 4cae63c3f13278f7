/** How a user's effect function is retried, shared by the configuration and the run workflow. */

/** EFFECT_MAX_ATTEMPTS's default: about 15 minutes of attempts (1 s doubling, 1 minute apart at most). */
export const DEFAULT_EFFECT_MAX_ATTEMPTS = 20;

/** EFFECT_TIMEOUT_SECONDS's default: how long one attempt of an effect function may take. */
export const DEFAULT_EFFECT_TIMEOUT_SECONDS = 300;

/** `ApplicationFailure` type of a run whose effect failed every attempt (`effect_failed`). */
export const EFFECT_FAILED = 'EffectFailed';
