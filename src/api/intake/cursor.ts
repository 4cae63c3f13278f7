import { createHmac, timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../contract/errors';

/**
 * List cursors are Temporal page tokens the API signed: `<token>.<mac>`. A cursor the API did not hand
 * out (garbled, truncated, made up) is a 400 here and never reaches Temporal, which would answer
 * invalid-argument. The key is derived from the admin token, so every API process agrees on it.
 */
export class CursorSigner {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', secret).update('fairway list cursor v1').digest();
  }

  private mac(token: string): string {
    return createHmac('sha256', this.key).update(token).digest('base64url');
  }

  sign(token: string | null): string | null {
    return token === null ? null : `${token}.${this.mac(token)}`;
  }

  /** The page token inside a cursor this API signed; 400 invalid_request otherwise. */
  verify(cursor: string): string {
    const dot = cursor.lastIndexOf('.');
    const token = cursor.slice(0, Math.max(0, dot));
    const given = Buffer.from(cursor.slice(dot + 1));
    const expected = Buffer.from(this.mac(token));
    if (dot <= 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw ApiError.invalid(
        [{ path: 'cursor', message: 'Not a cursor this API handed out; pass nextCursor back unchanged.' }],
        'The cursor is invalid.',
      );
    }
    return token;
  }
}
