/**
 * The API server's validation of a NetworkPolicy (networking.k8s.io/v1): its `policyTypes` are
 * `Ingress` or `Egress`, at most two; a rule's port has a protocol of TCP, UDP or SCTP, a
 * numeric port in 1-65535, and an `endPort` only with a numeric `port` it is not below.
 */
import { cause, StatusCause } from './errors';
import { asArray, asObject, JsonObject } from './util';

/** What is wrong with a NetworkPolicy's spec (its defaults already applied). */
export function validateNetworkPolicy(obj: JsonObject): StatusCause[] {
  const out: StatusCause[] = [];
  const spec = asObject(obj.spec) ?? {};
  const types = asArray(spec.policyTypes);
  types.forEach((t, i) => {
    if (t !== 'Ingress' && t !== 'Egress')
      out.push(
        cause.notSupported(`spec.policyTypes[${i}]`, t, ['Ingress', 'Egress']),
      );
  });
  if (types.length > 2)
    out.push(
      cause.invalid(
        'spec.policyTypes',
        types,
        'may not specify more than two policyTypes',
      ),
    );
  for (const direction of ['ingress', 'egress']) {
    asArray(spec[direction]).forEach((rule, i) => {
      asArray(asObject(rule)?.ports).forEach((raw, j) => {
        const port = asObject(raw) ?? {};
        const f = `spec.${direction}[${i}].ports[${j}]`;
        if (
          port.protocol !== undefined &&
          !['TCP', 'UDP', 'SCTP'].includes(String(port.protocol))
        )
          out.push(
            cause.notSupported(`${f}.protocol`, port.protocol, [
              'SCTP',
              'TCP',
              'UDP',
            ]),
          );
        const p = port.port;
        if (
          typeof p === 'number' &&
          (!Number.isInteger(p) || p < 1 || p > 65535)
        )
          out.push(
            cause.invalid(
              `${f}.port`,
              p,
              'must be between 1 and 65535, inclusive',
            ),
          );
        if (port.endPort !== undefined) {
          if (typeof p !== 'number')
            out.push(
              cause.required(
                `${f}.port`,
                'may not be undefined when endPort is defined',
              ),
            );
          else if (typeof port.endPort === 'number' && port.endPort < p)
            out.push(
              cause.invalid(
                `${f}.endPort`,
                port.endPort,
                'must be greater than or equal to `port`',
              ),
            );
        }
      });
    });
  }
  return out;
}
