// Governed promotion, a section of the end-to-end test (e2e/fleet.e2e.mjs passes it its helpers):
// payments gets two stages, staging (sim-1) and prod (sim-2, which requires staging's verified
// version and one approval from group:default/release-managers). The guest releases a new image
// to staging, then to prod: the prod release waits for approval. The guest is a release manager
// too, yet may not approve a release the guest started (the button is disabled with why, the API
// answers 403); carol, signed in through the oauth2Proxy provider scripts/start.sh enables,
// approves it, and the card shows the release going through without a reload (signals: the test
// runs with polling off).

const ENTITY = 'component:default/payments';
const STAGING = 'sim-1';
const PROD = 'sim-2';
const GROUP = 'group:default/release-managers';
// The group as the portal names it: no entity ref in visible text.
const GROUP_NAME = 'release-managers';
const NEW_IMAGE = 'ghcr.io/acme/payments:1.6.0';
const AUTHOR_TEXT = 'You started this release: someone else must approve it';

/** A Fleet API call with a person's token: the status and the parsed answer, whatever it is. */
async function asUser(backend, token, method, route, body) {
  const res = await fetch(`${backend}/api/fleet${route}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = { text };
  }
  return { status: res.status, body: json };
}

/**
 * Carol's sign-in as an oauth2-proxy in front of the backend would make it: the header names the
 * catalog user (the local config trusts it; see scripts/start.sh).
 */
async function carolSignIn(backend) {
  const res = await fetch(`${backend}/api/auth/oauth2Proxy/refresh`, {
    headers: {
      'x-forwarded-user': 'carol',
      'x-requested-with': 'XMLHttpRequest',
    },
  });
  if (!res.ok) {
    throw new Error(
      `carol's sign-in through oauth2Proxy: HTTP ${
        res.status
      } ${await res.text()}`,
    );
  }
  const { backstageIdentity } = await res.json();
  const { userEntityRef, ownershipEntityRefs } = backstageIdentity.identity;
  if (userEntityRef !== 'user:default/carol') {
    throw new Error(`oauth2Proxy signed in ${userEntityRef}, not carol`);
  }
  return { token: backstageIdentity.token, claims: ownershipEntityRefs };
}

/** Hovers the disabled Approve button's span until its tooltip says why (the user loads first). */
async function authorTooltip(page, waiting, waitFor) {
  const approve = waiting.getByRole('button', { name: 'Approve' });
  const tooltip = page.getByRole('tooltip').getByText(AUTHOR_TEXT);
  await waitFor(
    "the Approve button's tooltip",
    async () => {
      await page.mouse.move(0, 0);
      await approve.locator('xpath=..').hover();
      await tooltip.waitFor({ timeout: 2_000 });
      return true;
    },
    30_000,
    500,
  );
  if (!(await approve.isDisabled())) {
    throw new Error('the Approve button is enabled for the release author');
  }
}

/** The stages, set through the API (PATCH merges `spec` into the application's). */
async function setStages(api, applicationId) {
  const application = await api('PATCH', `/applications/${applicationId}`, {
    spec: {
      stages: [
        { name: 'staging', clusters: [STAGING] },
        {
          name: 'prod',
          clusters: [PROD],
          requires: {
            stage: 'staging',
            approvals: { groups: [GROUP], count: 1 },
          },
        },
      ],
    },
  });
  const names = (application.spec.stages ?? []).map(s => s.name).join(', ');
  if (names !== 'staging, prod') {
    throw new Error(`payments' stages are not staging, prod: ${names}`);
  }
}

/**
 * The whole section. `h` holds the test's helpers and addresses: api, waitFor, shot, readmeImage,
 * guestSignIn, log, FRONTEND, BACKEND.
 */
export async function governedPromotion(page, h) {
  const { api, waitFor, shot, readmeImage, guestSignIn, log } = h;
  const { FRONTEND, BACKEND } = h;
  const deployments = async () =>
    new Map(
      (await api('GET', `/deployments?entityRef=${ENTITY}`)).items.map(d => [
        d.cluster,
        d,
      ]),
    );
  const applicationId = (await deployments()).get(STAGING).applicationId;
  await setStages(api, applicationId);
  log(
    `payments' stages: staging (${STAGING}), prod (${PROD}, requires staging and 1 approval from ${GROUP})`,
  );

  // The guest, a person (the static dev token is a service): the author of both releases.
  const guest = (await guestSignIn()).token;
  const release = (body, as = guest) =>
    asUser(
      BACKEND,
      as,
      'POST',
      `/applications/${applicationId}/releases`,
      body,
    );

  const early = await release({ image: NEW_IMAGE, stage: 'prod' });
  if (early.status !== 409) {
    throw new Error(
      `a release to prod before staging verified it answered ${
        early.status
      }: ${JSON.stringify(early.body)}`,
    );
  }
  log(
    `prod before staging verified ${NEW_IMAGE}: 409 (${early.body.error?.message})`,
  );

  const staging = await release({ image: NEW_IMAGE, stage: 'staging' });
  if (
    staging.status !== 201 ||
    staging.body.createdBy !== 'user:default/guest'
  ) {
    throw new Error(
      `the release to staging: HTTP ${staging.status} ${JSON.stringify(
        staging.body,
      )}`,
    );
  }
  const stagingDone = await waitFor(
    'the release to staging COMPLETED',
    async () => {
      const r = await api('GET', `/releases/${staging.body.id}`);
      if (['FAILED', 'ROLLED_BACK', 'REJECTED'].includes(r.status)) {
        throw new Error(`the release to staging ended ${r.status}`);
      }
      return r.status === 'COMPLETED' ? r : undefined;
    },
    120_000,
    1000,
  );
  log(
    `release ${stagingDone.id} to staging by ${stagingDone.createdBy}: COMPLETED`,
  );

  const prod = await release({ image: NEW_IMAGE, stage: 'prod' });
  if (prod.status !== 201 || prod.body.status !== 'WAITING_FOR_APPROVAL') {
    throw new Error(
      `the release to prod: HTTP ${prod.status} ${JSON.stringify(prod.body)}`,
    );
  }
  const prodId = prod.body.id;
  log(`release ${prodId} to prod: 201, WAITING_FOR_APPROVAL`);

  // The fleet page lists it while it waits.
  await page.goto(`${FRONTEND}/fleet`);
  const waitingRow = page
    .getByRole('table', { name: 'Releases waiting' })
    .locator(`tr[data-release="${prodId}"]`);
  await waitingRow.getByText('Waiting for approval').waitFor();
  await waitingRow
    .getByText(`1 approval from ${GROUP_NAME} (0 given)`)
    .waitFor();
  log('fleet page: "Releases waiting" lists the release to prod');

  // payments' page: the stage strip, and the waiting release the guest may not approve.
  await page.goto(`${FRONTEND}/catalog/default/component/payments`);
  const stages = page.getByRole('region', { name: 'Stages' });
  const stagingBox = stages.getByRole('listitem', { name: 'Stage staging' });
  const prodBox = stages.getByRole('listitem', { name: 'Stage prod' });
  await stagingBox.getByTestId('stage-verified').getByText('1.6.0').waitFor();
  await prodBox.getByText('ready to take 1.6.0').waitFor();
  await stages.evaluate(el => el.scrollIntoView({ block: 'start' }));
  await shot(page, 'stages-staging-verified');
  await readmeImage(page, stages, 'stage-strip.png');

  const waiting = page.getByRole('region', { name: 'Waiting release' });
  await waiting
    .getByTestId('fleet-release-status')
    .getByText('Waiting for approval', { exact: true })
    .waitFor();
  await waiting
    .getByText(`Needs 1 approval from ${GROUP_NAME} (0 given)`)
    .waitFor();
  await authorTooltip(page, waiting, waitFor);
  log(`the guest's Approve button: disabled, "${AUTHOR_TEXT}"`);
  await shot(page, 'waiting-release-author');
  await page.mouse.move(0, 0);
  await page.getByRole('tooltip').waitFor({ state: 'detached' });
  await readmeImage(page, waiting, 'waiting-release.png');

  const byGuest = await asUser(
    BACKEND,
    guest,
    'POST',
    `/releases/${prodId}/approve`,
    {
      comment: 'my own',
    },
  );
  const reason = `You started release '${prodId}': someone else must approve it`;
  if (byGuest.status !== 403 || byGuest.body.error?.message !== reason) {
    throw new Error(
      `the guest approving their own release: HTTP ${
        byGuest.status
      } ${JSON.stringify(byGuest.body)}`,
    );
  }
  log(`the guest approving through the API: 403 "${reason}"`);

  // Carol, another release manager, approves: the release starts.
  const carol = await carolSignIn(BACKEND);
  if (!carol.claims.includes(GROUP)) {
    throw new Error(`carol's claims lack ${GROUP}: ${carol.claims}`);
  }
  const approved = await asUser(
    BACKEND,
    carol.token,
    'POST',
    `/releases/${prodId}/approve`,
    {
      comment: 'staging ran it fine',
    },
  );
  if (approved.status !== 200) {
    throw new Error(
      `carol's approval: HTTP ${approved.status} ${JSON.stringify(
        approved.body,
      )}`,
    );
  }
  log(`carol approved through the API: the release is ${approved.body.status}`);

  // Without a reload: the waiting release goes, prod runs the new image, the release completed.
  await waiting.waitFor({ state: 'detached', timeout: 30_000 });
  const prodRow = page.locator(
    `table[aria-label="Deployments"] tr[data-cluster="${PROD}"]`,
  );
  await prodRow.getByText(NEW_IMAGE).waitFor({ timeout: 60_000 });
  await prodRow
    .getByLabel('Deployment status: DEPLOYED')
    .waitFor({ timeout: 60_000 });
  await page
    .getByRole('table', { name: 'Release history' })
    .locator(`tr[data-release="${prodId}"]`)
    .getByText('Completed')
    .waitFor({ timeout: 60_000 });
  await prodBox
    .getByText("runs staging's verified 1.6.0")
    .waitFor({ timeout: 30_000 });
  const done = await api('GET', `/releases/${prodId}`);
  const decision = done.gate?.decisions?.find(d => d.decision === 'APPROVED');
  if (
    done.status !== 'COMPLETED' ||
    decision?.actor !== 'user:default/carol' ||
    decision?.comment !== 'staging ran it fine'
  ) {
    throw new Error(`the approved release: ${JSON.stringify(done)}`);
  }
  const prodNow = (await deployments()).get(PROD);
  log(
    `without a reload: the release to prod COMPLETED (approved by ${decision.actor}), ${PROD} runs ${prodNow.image}`,
  );
  await stages.evaluate(el => el.scrollIntoView({ block: 'start' }));
  await shot(page, 'stages-prod-approved');
}
