/**
 * The Kubernetes version a simulated cluster serves (`GET /version`, v1.30.0 unless set), and
 * the pod fields that version does not know yet: the `sleep` lifecycle handler came in 1.29
 * behind the `PodLifecycleSleepAction` feature gate (off by default) and is on by default from
 * 1.30, so an API server below 1.30 refuses it as it refuses any handler without an action.
 */
import { cause, StatusCause } from './errors';
import { ResourceDef } from './resourceDef';
import { SERVER_VERSION } from './resources';
import { asArray, asObject, JsonObject } from './util';

export type ServerVersion = typeof SERVER_VERSION;

/** `v1.29.4` (or `1.29`) as the version document a server of that version answers. */
export function serverVersionOf(gitVersion: string): ServerVersion {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?$/.exec(gitVersion.trim());
  if (!m)
    throw new Error(
      `invalid server version ${JSON.stringify(
        gitVersion,
      )}: expected vMAJOR.MINOR.PATCH`,
    );
  return {
    ...SERVER_VERSION,
    major: m[1],
    minor: m[2],
    gitVersion: `v${m[1]}.${m[2]}.${m[3] ?? '0'}`,
  };
}

/** Whether `version` is `major.minor` or newer. */
export function atLeast(version: ServerVersion, major: number, minor: number) {
  const have = [Number(version.major), Number(version.minor)];
  return have[0] > major || (have[0] === major && have[1] >= minor);
}

/** The pod template of a workload kind, or the pod spec of a Pod. */
function podSpecOf(
  def: ResourceDef,
  obj: JsonObject,
): [JsonObject, string] | undefined {
  const spec = asObject(obj.spec);
  if (def.kind === 'Pod') return spec ? [spec, 'spec'] : undefined;
  const template = asObject(asObject(spec?.template)?.spec);
  return template ? [template, 'spec.template.spec'] : undefined;
}

/** What `version` refuses in `obj` that a newer server would take. */
export function versionCauses(
  def: ResourceDef,
  obj: JsonObject,
  version: ServerVersion,
): StatusCause[] {
  if (atLeast(version, 1, 30)) return [];
  const pod = podSpecOf(def, obj);
  if (!pod) return [];
  const [spec, base] = pod;
  const out: StatusCause[] = [];
  for (const list of ['initContainers', 'containers']) {
    asArray(spec[list]).forEach((raw, i) => {
      const lifecycle = asObject(asObject(raw)?.lifecycle) ?? {};
      for (const hook of ['preStop', 'postStart']) {
        const handler = asObject(lifecycle[hook]);
        if (!handler?.sleep) continue;
        const others = ['exec', 'httpGet', 'tcpSocket'].some(k => handler[k]);
        // The field is unknown there: dropped, which leaves a handler without an action.
        if (!others)
          out.push(
            cause.required(
              `${base}.${list}[${i}].lifecycle.${hook}`,
              'must specify a handler type',
            ),
          );
      }
    });
  }
  return out;
}
