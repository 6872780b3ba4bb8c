/** A throwaway TLS identity for loopback HTTPS servers in tests (never for anything else). */
import { generate } from 'selfsigned';

export interface LoopbackCertificate {
  /** PEM certificate; trust it as a CA (it is self-signed). */
  cert: string;
  /** PEM private key. */
  key: string;
}

export async function createLoopbackCertificate(): Promise<LoopbackCertificate> {
  const notBeforeDate = new Date(Date.now() - 60_000);
  const result = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate: new Date(notBeforeDate.getTime() + 7 * 24 * 3600 * 1000),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { cert: result.cert, key: result.private };
}
