/**
 * What the API server checks of a write's request before the store's own rules: the body
 * decodes as an object of the endpoint's kind (apiVersion, kind, namespace, quantities, Secret
 * data), the name matches the URL's, and a DELETE's preconditions hold.
 */
import { configMapDecodeProblem } from './configAndAccess';
import { ApiError, errors, StatusCause } from './errors';
import { canonicalizeQuantities } from './quantity';
import { apiVersionOf, ResourceDef } from './resourceDef';
import { secretDecodeProblem } from './secretsAndIngresses';
import { asObject, clone, isPlainObject, JsonObject } from './util';

/** The request body as an object of `def`'s kind (a copy), or 400 Bad Request. */
export function decodeBody(
  def: ResourceDef,
  namespace: string | undefined,
  body: unknown,
): JsonObject {
  if (!isPlainObject(body))
    throw errors.badRequest('the request body must be a JSON object');
  const apiVersion = body.apiVersion;
  if (apiVersion !== undefined && apiVersion !== apiVersionOf(def)) {
    throw errors.badRequest(
      `the API version in the data (${String(
        apiVersion,
      )}) does not match the expected API version (${apiVersionOf(def)})`,
    );
  }
  if (body.kind !== undefined && body.kind !== def.kind) {
    throw errors.badRequest(
      `${def.kind} in version "${def.version}" cannot be handled as a ${String(
        body.kind,
      )}: the object kind does not match the endpoint`,
    );
  }
  const meta = asObject(body.metadata) ?? {};
  if (
    def.namespaced &&
    meta.namespace !== undefined &&
    meta.namespace !== '' &&
    meta.namespace !== namespace
  ) {
    throw errors.badRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
  const obj = clone(body);
  // Quantities are read when the body is decoded: a bad one fails the
  // decoding, before defaulting and validation.
  const problem =
    canonicalizeQuantities(def, obj) ??
    secretDecodeProblem(def, obj) ??
    configMapDecodeProblem(def, obj);
  if (problem) {
    throw errors.badRequest(
      `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: ${problem}`,
    );
  }
  return obj;
}

export function nameMismatch(given: unknown, url: string): ApiError {
  return errors.badRequest(
    `the name of the object (${String(
      given,
    )}) does not match the name on the URL (${url})`,
  );
}

/** 422 Invalid, with the causes. */
export function invalid(
  def: ResourceDef,
  name: string,
  causes: StatusCause[],
): ApiError {
  return errors.invalid(def.kind, def.group, name, causes);
}

/** 409 Conflict unless a DELETE's preconditions (uid, resourceVersion) match the object. */
export function checkPreconditions(
  def: ResourceDef,
  name: string,
  meta: JsonObject,
  options: unknown,
): void {
  const pre = asObject(asObject(options)?.preconditions);
  if (pre?.uid !== undefined && pre.uid !== meta.uid) {
    throw errors.conflict(
      def.plural,
      def.group,
      name,
      `Precondition failed: UID in precondition: ${String(
        pre.uid,
      )}, UID in object meta: ${String(meta.uid)}`,
    );
  }
  if (
    pre?.resourceVersion !== undefined &&
    pre.resourceVersion !== meta.resourceVersion
  ) {
    throw errors.conflict(
      def.plural,
      def.group,
      name,
      `Precondition failed: ResourceVersion in precondition: ${String(
        pre.resourceVersion,
      )}, ResourceVersion in meta: ${String(meta.resourceVersion)}`,
    );
  }
}
