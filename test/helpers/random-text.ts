/** Text for tests that need large payloads the codec's compression (decision 0250) cannot shrink much. */
import { randomBytes } from 'node:crypto';

/** `length` CJK ideographs (U+4E00–U+9FFF) drawn at random: three bytes each in UTF-8, ~60 % left compressed. */
export function randomCjk(length: number): string {
  const bytes = randomBytes(2 * length);
  let text = '';
  for (let index = 0; index < length; index++)
    text += String.fromCharCode(0x4e00 + (bytes.readUInt16LE(2 * index) % 0x5200));
  return text;
}
