// A progressive release started from the Release dialog's default strategy, a section of the
// end-to-end test (e2e/fleet.e2e.mjs passes it its helpers): a newcomer ticks "Progressive", keeps
// the example the dialog writes (its analysis on the Prometheus server the backend allows, the
// demo's), promotes once, and the release completes.

const ENTITY = 'component:default/payments';
const CLUSTER = 'sim-1';
const NEW_IMAGE = 'ghcr.io/acme/payments:1.5.2';

export async function defaultStrategyRelease(page, helpers) {
  const { api, waitFor, shot, log, FRONTEND, PROMETHEUS_PORT } = helpers;
  const { items: deployments } = await api(
    'GET',
    `/deployments?entityRef=${ENTITY}`,
  );
  const before = deployments.find(d => d.cluster === CLUSTER);
  if (before?.status !== 'DEPLOYED') {
    throw new Error(`payments is not DEPLOYED on ${CLUSTER}`);
  }

  await page.goto(`${FRONTEND}/catalog/default/component/payments`);
  const section = page.getByTestId('fleet-release');
  await section.waitFor();
  await section.getByText('No release under way.').waitFor({ timeout: 60_000 });
  await page.getByRole('button', { name: 'Release', exact: true }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByText('Release payments').waitFor();
  await dialog.getByRole('textbox', { name: 'Image' }).fill(NEW_IMAGE);
  await dialog
    .getByRole('checkbox', { name: new RegExp(`^${CLUSTER} — `) })
    .check();
  await dialog
    .getByRole('checkbox', { name: 'Progressive (strategy)' })
    .check();
  const yaml = dialog.getByRole('textbox', { name: 'Strategy (YAML)' });
  // The example follows the ticked cluster and the analysis server the backend allows.
  const address = `address: http://127.0.0.1:${PROMETHEUS_PORT}`;
  await waitFor(
    'the default strategy names sim-1 and the allowed Prometheus server',
    async () => {
      const text = await yaml.inputValue();
      return text.includes(`clusters: [${CLUSTER}]`) && text.includes(address)
        ? text
        : undefined;
    },
    30_000,
    250,
  );
  await dialog.getByRole('button', { name: 'Start release' }).click();
  await dialog.waitFor({ state: 'detached' });

  const cell = section.getByTestId(`fleet-release-cluster-${CLUSTER}`);
  await cell.getByText(/waiting for promote/).waitFor({ timeout: 120_000 });
  const { items: releases } = await api(
    'GET',
    `/applications/${before.applicationId}/releases`,
  );
  const release = releases.find(r => r.image === NEW_IMAGE);
  if (!release)
    throw new Error('the default-strategy release is not in the API');
  log(
    `default-strategy release ${release.id}: ${CLUSTER} at 20 %, waiting for promote`,
  );
  await section.evaluate(el => el.scrollIntoView({ block: 'start' }));
  await shot(page, 'default-strategy-waiting-for-promote');
  await section.getByRole('button', { name: 'Promote' }).click();

  const ended = await waitFor(
    'the default-strategy release COMPLETED',
    async () => {
      const r = await api('GET', `/releases/${release.id}`);
      if (['ROLLED_BACK', 'FAILED', 'REJECTED'].includes(r.status)) {
        throw new Error(
          `the default-strategy release ended ${r.status}: ${JSON.stringify(
            r.progress?.abort,
          )}`,
        );
      }
      return r.status === 'COMPLETED' ? r : undefined;
    },
    240_000,
    1000,
  );
  const measured = ended.progress.analysis.filter(
    m => m.cluster === CLUSTER && m.phase === 'Successful',
  );
  if (measured.length === 0) {
    throw new Error(
      `the default strategy's analysis never measured on ${CLUSTER}: ${JSON.stringify(
        ended.progress.analysis,
      )}`,
    );
  }
  const after = (
    await api('GET', `/deployments?entityRef=${ENTITY}`)
  ).items.find(d => d.cluster === CLUSTER);
  if (after.image !== NEW_IMAGE || after.status !== 'DEPLOYED') {
    throw new Error(
      `${CLUSTER} runs ${after.image} (${after.status}) after the release, not ${NEW_IMAGE}`,
    );
  }
  await section.getByText('No release under way.').waitFor({ timeout: 60_000 });
  log(
    `default-strategy release COMPLETED: ${CLUSTER} runs ${NEW_IMAGE}, ${measured.length} successful analysis measurement(s)`,
  );
}
