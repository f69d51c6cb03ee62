// The README tour's "break a rollout and watch the automatic rollback", a section of the
// end-to-end test (e2e/fleet.e2e.mjs passes it its helpers): payments gets an image the simulator
// never makes ready (`:broken`) on sim-2 through the Deploy dialog; the row stays PROGRESSING
// saying what the rollout waits for and when it fails, then the revision FAILS at the demo's
// 60 s progress deadline and Fleet rolls back on its own to the image that ran before.

const ENTITY = 'component:default/payments';
const CLUSTER = 'sim-2';
const BROKEN = 'ghcr.io/acme/payments:broken';

export async function brokenRollout(page, helpers) {
  const { api, waitFor, shot, dialogShot, log, FRONTEND } = helpers;
  const deploymentOn = async () =>
    (await api('GET', `/deployments?entityRef=${ENTITY}&cluster=${CLUSTER}`))
      .items[0];
  const before = await waitFor(
    `payments DEPLOYED on ${CLUSTER}`,
    async () => {
      const d = await deploymentOn();
      return d?.status === 'DEPLOYED' ? d : undefined;
    },
    90_000,
    1000,
  );

  await page.goto(`${FRONTEND}/catalog/default/component/payments`);
  const row = page.locator(
    `table[aria-label="Deployments"] tr[data-cluster="${CLUSTER}"]`,
  );
  await row.getByLabel('Deployment status: DEPLOYED').waitFor();
  await page.getByRole('button', { name: 'Deploy', exact: true }).click();
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Cluster' }).click();
  await page
    .getByRole('option', { name: new RegExp(`^${CLUSTER} — ONLINE`) })
    .click();
  await dialog.getByLabel('Image').fill(BROKEN);
  await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
  await dialog.waitFor({ state: 'detached' });

  // While it is stuck, the row says what the rollout waits for and when it fails.
  await row
    .getByLabel('Deployment status: PROGRESSING')
    .waitFor({ timeout: 60_000 });
  const progress = row.getByTestId('rollout-progress');
  await progress
    .getByText(/replicas? (updated|available)|ready/)
    .waitFor({ timeout: 30_000 });
  await progress
    .filter({ hasText: /fails in .+ if not complete$/ })
    .waitFor({ timeout: 30_000 });
  log(`broken rollout on ${CLUSTER}: '${(await progress.innerText()).trim()}'`);
  await shot(page, 'broken-rollout-progressing');

  // At the progress deadline the revision fails, and the previous one runs again.
  const failedRevision = before.revision + 1;
  const back = await waitFor(
    `the automatic rollback of ${CLUSTER} DEPLOYED`,
    async () => {
      const d = await deploymentOn();
      return d.status === 'DEPLOYED' && d.revision > failedRevision
        ? d
        : undefined;
    },
    150_000,
    1000,
  );
  if (back.image !== before.image || back.statusReason !== 'ROLLED_BACK') {
    throw new Error(
      `after the broken rollout ${CLUSTER} runs ${back.image} (${back.statusReason}), not ${before.image} rolled back`,
    );
  }
  const { items: revisions } = await api(
    'GET',
    `/deployments/${before.id}/revisions`,
  );
  const failed = revisions.find(r => r.revision === failedRevision);
  const rollback = revisions.find(r => r.revision === back.revision);
  if (
    failed?.image !== BROKEN ||
    failed.outcome !== 'FAILED' ||
    rollback?.cause !== 'auto-rollback'
  ) {
    throw new Error(
      `unexpected revisions after the broken rollout: ${JSON.stringify(
        revisions.slice(0, 3),
      )}`,
    );
  }
  await row.getByText(before.image).waitFor({ timeout: 60_000 });
  await row.getByLabel('Deployment status: DEPLOYED').waitFor();
  log(
    `revision ${failedRevision} (${BROKEN}) FAILED at the deadline; revision ${back.revision} (auto-rollback) runs ${before.image}`,
  );
  await page.getByRole('button', { name: `History on ${CLUSTER}` }).click();
  const history = page.getByRole('dialog');
  await history
    .getByRole('table', { name: 'Revisions' })
    .getByText(BROKEN)
    .first()
    .waitFor();
  await dialogShot(page, 'broken-rollout-history');
  await history.getByRole('button', { name: 'Close' }).click();
  await history.waitFor({ state: 'detached' });
}
