/*
 * OpenTelemetry for the backend, as Backstage's "Setup OpenTelemetry" tutorial sets it up: loaded
 * with `node --require` before anything else (`yarn start` passes it; so does the Dockerfile's
 * CMD), it registers the SDK whose meter provider Backstage's metrics service and every plugin's
 * `@opentelemetry/api` calls then report to, and a Prometheus exporter that serves them at
 * http://<host>:9464/metrics (OTEL_EXPORTER_PROMETHEUS_PORT and OTEL_EXPORTER_PROMETHEUS_HOST
 * change where). Fleet's metrics are listed in the README ("Metrics").
 *
 * Only metrics are set up here. Traces and logs exporters are off unless OTEL_TRACES_EXPORTER /
 * OTEL_LOGS_EXPORTER say otherwise; add `@opentelemetry/auto-instrumentations-node` to trace
 * HTTP and database calls as the tutorial shows.
 */
// Worker threads load this file too: the SDK runs once, in the main thread.
const { isMainThread } = require('node:worker_threads');

if (isMainThread) {
  process.env.OTEL_TRACES_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  process.env.OTEL_SERVICE_NAME ??= 'backstage-backend';
  const { NodeSDK } = require('@opentelemetry/sdk-node');
  const { PrometheusExporter } = require('@opentelemetry/exporter-prometheus');

  const port = Number(process.env.OTEL_EXPORTER_PROMETHEUS_PORT || 9464);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(
      `OTEL_EXPORTER_PROMETHEUS_PORT must be a port number, got '${process.env.OTEL_EXPORTER_PROMETHEUS_PORT}'`,
    );
  }
  const sdk = new NodeSDK({
    metricReaders: [
      new PrometheusExporter({
        host: process.env.OTEL_EXPORTER_PROMETHEUS_HOST || undefined,
        port,
      }),
    ],
  });
  sdk.start();
}
