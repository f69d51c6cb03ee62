import { parseEntityRef } from '@backstage/catalog-model';
import {
  EntityRefLink,
  humanizeEntityRef,
} from '@backstage/plugin-catalog-react';

/** Fleet's own workers, as they sign what they do, in words. */
const WORKERS: Record<string, string> = {
  'fleet-release': 'Fleet (release)',
  'fleet-reconcile': 'Fleet (reconcile)',
  'fleet-health': 'Fleet (health check)',
  'fleet-discovery': 'Fleet (cluster discovery)',
  'fleet-undeploy': 'Fleet (undeploy)',
  'fleet-rollout': 'Fleet (rollout)',
};

/** `user:default/guest` → `guest`; `group:team-a/ops` → `team-a/ops`; anything else as it is. */
export function humanizedRef(ref: string, defaultKind = 'user'): string {
  try {
    return humanizeEntityRef(parseEntityRef(ref, { defaultKind }), {
      defaultKind,
    });
  } catch {
    return ref;
  }
}

/**
 * Who did something, in words, for text: a user's or group's name without its kind and default
 * namespace, one of Fleet's workers by what it does, "… via <service>" kept.
 */
export function actorText(actor: string): string {
  const [who, ...via] = actor.split(' via ');
  const name = WORKERS[who.trim()] ?? humanizedRef(who.trim());
  return [name, ...via].join(' via ');
}

/**
 * An entity by its name, linked to its catalog page, the full ref on hover: `guest` for
 * `user:default/guest`, `payments` for `component:default/payments`.
 *
 * @public
 */
export function EntityName(props: { entityRef: string; defaultKind?: string }) {
  const defaultKind = props.defaultKind ?? 'component';
  let ref;
  try {
    ref = parseEntityRef(props.entityRef, { defaultKind });
  } catch {
    return <span>{props.entityRef}</span>;
  }
  return (
    <span title={props.entityRef}>
      <EntityRefLink entityRef={ref}>
        {humanizeEntityRef(ref, { defaultKind })}
      </EntityRefLink>
    </span>
  );
}

/**
 * Who did something: a user or group linked by name (the ref on hover), one of Fleet's workers in
 * words, "via <service>" kept.
 *
 * @public
 */
export function ActorName(props: { actor: string }) {
  const [who, ...via] = props.actor.split(' via ');
  const trimmed = who.trim();
  const suffix = via.length ? ` via ${via.join(' via ')}` : '';
  if (WORKERS[trimmed] || !/^[a-z]+:/i.test(trimmed)) {
    return (
      <span title={props.actor}>
        {WORKERS[trimmed] ?? trimmed}
        {suffix}
      </span>
    );
  }
  return (
    <>
      <EntityName entityRef={trimmed} defaultKind="user" />
      {suffix}
    </>
  );
}
