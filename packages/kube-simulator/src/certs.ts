/**
 * The simulator's TLS identity: one self-signed certificate, valid for
 * 127.0.0.1 and localhost, that is both the server certificate and the CA
 * the kubeconfigs trust (`certificate-authority-data`).
 */
import { generate } from 'selfsigned';

export interface ServerCertificate {
  certPem: string;
  keyPem: string;
}

export async function createServerCertificate(): Promise<ServerCertificate> {
  const notBeforeDate = new Date(Date.now() - 60_000);
  const notAfterDate = new Date(Date.now() + 365 * 24 * 3600 * 1000);
  const pems = await generate(
    [{ name: 'commonName', value: 'kube-simulator' }],
    {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      notBeforeDate,
      notAfterDate,
      extensions: [
        { name: 'basicConstraints', cA: true, critical: true },
        {
          name: 'keyUsage',
          digitalSignature: true,
          keyCertSign: true,
          critical: true,
        },
        { name: 'extKeyUsage', serverAuth: true },
        {
          name: 'subjectAltName',
          altNames: [
            { type: 2, value: 'localhost' },
            { type: 7, ip: '127.0.0.1' },
          ],
        },
      ],
    },
  );
  return { certPem: pems.cert, keyPem: pems.private };
}
