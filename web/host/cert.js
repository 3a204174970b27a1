// A throwaway WebTransport certificate, made at start-up and never written into the repo
// (TOOLCHAIN.md § WebTransport): ECDSA P-256, valid 10 days, SAN IP:127.0.0.1 (and ::1), pinned by
// clients through serverCertificateHashes with the SHA-256 of the DER certificate.
export async function makeCertificate() {
  const dir = await Deno.makeTempDir({ prefix: 'tether-cert-' });
  try {
    const run = async (args) => {
      const out = await new Deno.Command('openssl', {
        args,
        stdout: 'null',
        stderr: 'piped',
      }).output();
      if (!out.success) {
        throw new Error(
          `openssl ${args[0]} failed: ${new TextDecoder().decode(out.stderr)}; install openssl (tools/setup.sh)`,
        );
      }
    };
    await run([
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '10',
      '-subj',
      '/CN=tether-local-relay',
      '-addext',
      'subjectAltName=IP:127.0.0.1,IP:::1',
      '-keyout',
      `${dir}/key.pem`,
      '-out',
      `${dir}/cert.pem`,
    ]);
    await run(['x509', '-in', `${dir}/cert.pem`, '-outform', 'DER', '-out', `${dir}/cert.der`]);
    const cert = await Deno.readTextFile(`${dir}/cert.pem`);
    const key = await Deno.readTextFile(`${dir}/key.pem`);
    const der = await Deno.readFile(`${dir}/cert.der`);
    const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', der));
    const hex = [...hash].map((b) => b.toString(16).padStart(2, '0')).join('');
    return { cert, key, hash, hex };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** serverCertificateHashes for a hex SHA-256. */
export function pinnedHashes(hex) {
  const value = new Uint8Array(hex.match(/../g).map((h) => parseInt(h, 16)));
  return [{ algorithm: 'sha-256', value }];
}

/**
 * A Deno QUIC endpoint on `hostname:port` listening for WebTransport (h3) with `cert`, with the
 * relay's idle and keep-alive timings. `streamCredit` grants the stream credit one-shot streams
 * need: they complete only when the peer's lazy FIN lands (cockpit-wire-protocol.md workaround 2),
 * about a second later on Deno. Throws when the UDP port is taken.
 * @param {{hostname?: string, port?: number, cert: {cert: string, key: string}, streamCredit?: boolean}} o
 */
export function listenWebTransport({
  hostname = '127.0.0.1',
  port = 0,
  cert,
  streamCredit = false,
}) {
  const endpoint = new Deno.QuicEndpoint({ hostname, port });
  const listener = endpoint.listen({
    cert: cert.cert,
    key: cert.key,
    alpnProtocols: ['h3'],
    maxIdleTimeout: 5000,
    keepAliveInterval: 1000,
    ...(streamCredit
      ? { maxConcurrentBidirectionalStreams: 4096, maxConcurrentUnidirectionalStreams: 1024 }
      : {}),
  });
  return { endpoint, listener };
}
