/**
 * Issue 29's proxy attack as one `bash` command: raw requests to the sandbox's proxy over
 * `/dev/tcp`, so no client rewrites the host first, for every textual form of a special address
 * (`bypassForms`, and loopback by name) by CONNECT and by absolute-URI GET. A tunnel that opens
 * sends its GET through; every answer is printed on one line, `<host> <port> => <answer>`.
 */
import { bypassForms } from './bypass-forms';

/** Every form, bracketed where an IPv6 literal needs it, and loopback by name. */
export const probeTargets: readonly string[] = [
  ...bypassForms.map(([form]) => (form.includes(':') && !form.startsWith('[') ? `[${form}]` : form)),
  'localhost',
  'LOCALHOST.',
];

/** Probes every target on `secretPort`, then `localhost:allowedPort` (which must answer) both ways. */
export function proxyProbeCommand(secretPort: number, allowedPort: number): string {
  const tunnel = String.raw`CONNECT %s:%s HTTP/1.1\r\nhost: x\r\n\r\nGET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`;
  const plain = String.raw`GET http://%s:%s/ HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`;
  return [
    `probe() { exec 3<>/dev/tcp/127.0.0.1/3128 || { echo "$2 $3 no-proxy"; return; }`,
    `printf "$1" "$2" "$3" >&3`,
    String.raw`a=$(timeout 5 cat <&3 | tr -d '\r' | tr '\n' ' ')`,
    `exec 3<&-`,
    `echo "$2 $3 => $a"; }`,
    `for t in ${probeTargets.map((target) => `'${target}'`).join(' ')}; do probe '${tunnel}' "$t" ${secretPort}; probe '${plain}' "$t" ${secretPort}; done`,
    `probe '${tunnel}' localhost ${allowedPort}`,
    `probe '${plain}' localhost ${allowedPort}`,
  ].join('; ');
}

/** Splits the probe's output into the attempts on the secret port and the answers of the allowed host. */
export function probeLines(output: string, allowedPort: number): { attempts: string[]; allowed: string[] } {
  const lines = output.split('\n').filter((line) => line.includes(' => '));
  const isAllowed = (line: string) => line.startsWith(`localhost ${allowedPort} `);
  return { attempts: lines.filter((line) => !isAllowed(line)), allowed: lines.filter(isAllowed) };
}

/**
 * What a probe's output must show: every bypass form refused (nothing of the local service's
 * secret came back), and the two requests to the host named exactly answered.
 */
export function expectProbeRefused(output: string, allowedPort: number): void {
  const { attempts, allowed } = probeLines(output, allowedPort);
  expect(attempts).toHaveLength(probeTargets.length * 2);
  for (const line of attempts) {
    expect(line).not.toContain('secret-of-the-local-service');
    expect(line).toMatch(/ => HTTP\/1.1 (403 Forbidden .*Keel refused|400 Bad Request)/);
  }
  // The same requests to the host the thread and the operator name exactly are answered.
  expect(allowed).toHaveLength(2);
  for (const line of allowed) expect(line).toContain('answer-from-the-allowed-host');
}
