/**
 * Compact text codes for run ids inside the continue-as-new snapshot, relative to their tenant.
 * The API's two id forms lose their tenant prefix and their hex turns into base64url:
 *
 *   run-<tenant>-<20 hex>           → "r" + 14 characters
 *   batch-<tenant>-<16 hex>-<index> → "b" + 11 characters + index, or "i" + index when the
 *                                      previous batch item coded in the same sequence is of the same batch
 *   anything else                   → "=" + the id (or "%" + the id with separators as %XX)
 *
 * Codes never contain " ", ";", "*" or "!", so they can be joined with those.
 */

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const HEX = /^(?:[0-9a-f]{2})+$/;
const INDEX = /^(?:0|[1-9][0-9]{0,8})$/;
const SAFE = /^[^ ;*!%]+$/;
const UNSAFE = /[ ;*!%]/g;

function hexToB64(hex: string): string {
  let out = '';
  let bits = 0;
  let acc = 0;
  for (let i = 0; i < hex.length; i += 2) {
    acc = (acc << 8) | parseInt(hex.slice(i, i + 2), 16);
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += B64[(acc >> bits) & 63];
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) out += B64[(acc << (6 - bits)) & 63];
  return out;
}

function b64ToHex(b64: string, bytes: number): string {
  let out = '';
  let bits = 0;
  let acc = 0;
  for (const ch of b64) {
    acc = (acc << 6) | B64.indexOf(ch);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      if (out.length < bytes * 2) out += ((acc >> bits) & 255).toString(16).padStart(2, '0');
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

const b64Length = (hexLength: number) => Math.ceil(((hexLength / 2) * 8) / 6);

/** Codes a sequence of run ids of one tenant; carries the last batch seen. */
export class RunIdEncoder {
  private lastBatch = '';
  constructor(private readonly tenant: string) {}

  encode(id: string): string {
    const runPrefix = `run-${this.tenant}-`;
    if (id.startsWith(runPrefix)) {
      const hex = id.slice(runPrefix.length);
      if (hex.length === 20 && HEX.test(hex)) return 'r' + hexToB64(hex);
    }
    const batchPrefix = `batch-${this.tenant}-`;
    if (id.startsWith(batchPrefix)) {
      const rest = id.slice(batchPrefix.length);
      const hex = rest.slice(0, 16);
      const index = rest.slice(17);
      if (rest[16] === '-' && HEX.test(hex) && INDEX.test(index)) {
        if (hex === this.lastBatch) return 'i' + index;
        this.lastBatch = hex;
        return 'b' + hexToB64(hex) + index;
      }
    }
    return SAFE.test(id) ? '=' + id : '%' + id.replace(UNSAFE, (c) => '%' + c.charCodeAt(0).toString(16));
  }
}

export class RunIdDecoder {
  private lastBatch = '';
  constructor(private readonly tenant: string) {}

  decode(code: string): string {
    const body = code.slice(1);
    switch (code[0]) {
      case 'r':
        return `run-${this.tenant}-${b64ToHex(body, 10)}`;
      case 'b': {
        const n = b64Length(16);
        this.lastBatch = b64ToHex(body.slice(0, n), 8);
        return `batch-${this.tenant}-${this.lastBatch}-${body.slice(n)}`;
      }
      case 'i':
        return `batch-${this.tenant}-${this.lastBatch}-${body}`;
      case '%':
        return decodeURIComponent(body);
      default:
        return body;
    }
  }
}
