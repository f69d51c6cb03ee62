// A canary judged against its baseline, a section of the end-to-end test (e2e/fleet.e2e.mjs passes
// it its helpers): payments is released to sim-3 (a replicas cluster) with a template that
// compares the canary's latency with a baseline of the stable revision running beside it. The
// simulator's Prometheus draws both variants' samples from the same distribution (a no-change
// release, within noise): the release panel shows the judgment table while the canary is paused
// at 40 % (Pass, with both medians, p and the sample counts), the release completes, and nothing
// of the canary or the baseline is left on the cluster.

const ENTITY = 'component:default/payments';
const CLUSTER = 'sim-3';
const NEW_IMAGE = 'ghcr.io/acme/payments:1.5.1';
const LATENCY =
  'histogram_quantile(0.99, rate(http_latency_bucket{app="{{app}}",cluster="{{cluster}}",variant="{{variant}}"}[1m]))';
const ERRORS =
  'sum(rate(http_requests_total{app="{{app}}",cluster="{{cluster}}",variant="{{variant}}",code="500"}[1m]))';

/**
 * The same distribution for both variants: a release that changes nothing measurable. The
 * simulator answers a query from its most specific matching rule: `code="500"` tells the
 * error-rate query's rule from the latency's.
 */
async function sameOnBothSides(simulatorRequest, labels, distribution) {
  for (const [variant, seed] of [
    ['canary', 11],
    ['baseline', 12],
  ]) {
    await simulatorRequest('/_sim/prometheus/rules', {
      match: { app: 'payments', cluster: CLUSTER, variant, ...labels },
      distribution,
      seed,
    });
  }
}

/**
 * The step is judged every second over its 45 s pause, each time over a longer window: at the
 * default significance (0.05) the many looks at two metrics made one run in four fail a release
 * that changes nothing (a canary 7 % above its baseline at p = 0.03). A release judged this
 * often asks for stronger evidence; a real regression is far beyond it.
 */
const JUDGED_ALPHA = 0.001;

export async function judgedRelease(page, helpers) {
  const {
    api,
    waitFor,
    shot,
    readmeImage,
    log,
    simulatorRequest,
    FRONTEND,
    PROMETHEUS_PORT,
  } = helpers;
  const address = `http://127.0.0.1:${PROMETHEUS_PORT}`;
  await sameOnBothSides(
    simulatorRequest,
    {},
    {
      kind: 'lognormal',
      mu: Math.log(0.12),
      sigma: 0.08,
    },
  );
  await sameOnBothSides(
    simulatorRequest,
    { code: '500' },
    {
      kind: 'normal',
      mean: 0.2,
      sd: 0.02,
    },
  );

  const { items: deployments } = await api(
    'GET',
    `/deployments?entityRef=${ENTITY}`,
  );
  const stable = deployments.find(d => d.cluster === CLUSTER);
  if (stable?.status !== 'DEPLOYED') {
    throw new Error(`payments is not DEPLOYED on ${CLUSTER}`);
  }
  const release = await api(
    'POST',
    `/applications/${stable.applicationId}/releases`,
    {
      image: NEW_IMAGE,
      clusters: [CLUSTER],
      strategy: {
        waves: [{ clusters: [CLUSTER] }],
        canary: {
          steps: [
            { setWeight: 40 },
            { pause: { duration: '45s' } },
            { setWeight: 100 },
          ],
        },
        analysis: {
          templates: [
            {
              name: 'latency-p99',
              interval: '1s',
              compare: {
                baseline: true,
                direction: 'increase',
                minSamples: 8,
                alpha: JUDGED_ALPHA,
              },
              provider: { prometheus: { address, query: LATENCY } },
            },
            {
              name: 'error-rate',
              interval: '1s',
              weight: 2,
              compare: {
                baseline: true,
                direction: 'increase',
                minSamples: 8,
                alpha: JUDGED_ALPHA,
              },
              provider: { prometheus: { address, query: ERRORS } },
            },
          ],
        },
      },
    },
  );
  log(`judged release ${release.id} of ${NEW_IMAGE} to ${CLUSTER} started`);
  // The baseline Deployments seen on the cluster while the release runs (their images).
  const baselineImages = new Set();
  let watching = true;
  const watchBaseline = (async () => {
    while (watching) {
      try {
        const { items } = await simulatorRequest(
          `/clusters/${CLUSTER}/_sim/objects`,
        );
        for (const o of items)
          if (
            o.kind === 'Deployment' &&
            o.metadata?.name === 'payments-baseline'
          )
            baselineImages.add(o.spec.template.spec.containers[0].image);
      } catch {
        // A read that failed is read again.
      }
      await new Promise(r => setTimeout(r, 500));
    }
  })();

  await page.goto(`${FRONTEND}/catalog/default/component/payments`);
  const section = page.getByTestId('fleet-release');
  const judgments = section.getByRole('region', { name: 'Canary judgments' });
  const table = judgments.getByRole('table', {
    name: `Judgment on ${CLUSTER}`,
  });
  await table.waitFor({ timeout: 120_000 });
  for (const metric of ['latency-p99', 'error-rate']) {
    await table
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: metric }) })
      .getByText('Pass', { exact: true })
      .waitFor({ timeout: 60_000 });
  }
  const during = await api('GET', `/releases/${release.id}`);
  const judgment = during.progress.judgments?.at(-1);
  if (
    !judgment ||
    judgment.cluster !== CLUSTER ||
    judgment.verdict !== 'Pass' ||
    judgment.metrics.some(
      m =>
        m.result !== 'Pass' ||
        m.canarySamples < 8 ||
        m.baselineSamples < 8 ||
        typeof m.p !== 'number',
    )
  ) {
    throw new Error(`unexpected judgment: ${JSON.stringify(judgment)}`);
  }
  log(
    `judged on ${CLUSTER}: score ${judgment.score}, ${judgment.metrics
      .map(
        m =>
          `${m.template} canary ${m.canaryMedian} vs baseline ${m.baselineMedian} (p=${m.p})`,
      )
      .join('; ')}`,
  );
  // The README image first: the table goes with the release once its pause is over.
  await readmeImage(page, judgments, 'judgment-table.png');
  await judgments.evaluate(el => el.scrollIntoView({ block: 'start' }));
  await shot(page, 'judged-canary');

  const ended = await waitFor(
    'the judged release COMPLETED',
    async () => {
      const r = await api('GET', `/releases/${release.id}`);
      if (r.status === 'ROLLED_BACK' || r.status === 'FAILED') {
        throw new Error(
          `the judged release ended ${r.status}: ${JSON.stringify(
            r.progress.abort,
          )}`,
        );
      }
      return r.status === 'COMPLETED' ? r : undefined;
    },
    240_000,
    1000,
  );
  watching = false;
  await watchBaseline;
  // The baseline ran the stable image beside the canary, and only that.
  if (baselineImages.size !== 1 || !baselineImages.has(stable.image)) {
    throw new Error(
      `the baseline beside the canary ran ${JSON.stringify([
        ...baselineImages,
      ])}, not ${stable.image}`,
    );
  }
  const { items: after } = await simulatorRequest(
    `/clusters/${CLUSTER}/_sim/objects`,
  );
  const left = after.filter(o =>
    /^payments-(canary|baseline)$/.test(o.metadata?.name ?? ''),
  );
  if (left.length > 0) {
    throw new Error(
      `left on ${CLUSTER}: ${left.map(o => `${o.kind}/${o.metadata.name}`)}`,
    );
  }
  log(
    `judged release ${ended.status}: ${ended.progress.judgments.length} judgment(s); canary and baseline removed`,
  );
}
