import { ResponseError } from '@backstage/errors';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { mockApis } from '@backstage/test-utils';
import type { Release } from '@cnp/plugin-fleet-common';
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { deployment, mockFleetApi } from '../../testUtils/fixtures';
import { waitingRelease } from '../../testUtils/gateFixtures';
import { renderDeploymentsCard } from '../EntityFleetDeploymentsCard/__testUtils__/renderDeploymentsCard';
import { AUTHOR_APPROVAL_TEXT } from './WaitingRelease';

/** The card of payments (application app-1) with these releases. */
function withReleases(releases: Release[], extra = {}) {
  return mockFleetApi({
    listDeployments: jest
      .fn()
      .mockResolvedValue([deployment('sim-1', 'DEPLOYED')]),
    listReleases: jest.fn().mockResolvedValue(releases),
    ...extra,
  });
}

/** The same release, held by the freeze window friday-freeze on sim-2 until an hour from now. */
function frozenRelease(): Release {
  const base = waitingRelease();
  return {
    ...base,
    status: 'WAITING_FOR_WINDOW',
    gate: {
      ...base.gate!,
      decisions: [
        {
          actor: 'user:default/carol',
          decision: 'APPROVED',
          comment: 'numbers look fine',
          overrideFreeze: false,
          at: new Date().toISOString(),
        },
      ],
      window: {
        name: 'friday-freeze',
        clusters: ['sim-2'],
        closesAt: new Date(Date.now() + 3600_000).toISOString(),
      },
    },
  };
}

/** A release of payments to prod that only the freeze window friday-freeze holds: no approver group. */
function windowOnlyRelease(): Release {
  const base = frozenRelease();
  return { ...base, gate: { ...base.gate!, approvals: null, decisions: [] } };
}

const RELEASE_MANAGERS = ['group:default/release-managers'];

/** Every permission but fleet.release.manage. */
const withoutReleaseManage = () =>
  mockApis.permission({
    authorize: r =>
      r.permission.name === 'fleet.release.manage'
        ? AuthorizeResult.DENY
        : AuthorizeResult.ALLOW,
  });

const waiting = async () =>
  screen.findByRole('region', { name: 'Waiting release' });

/** The tooltip of a disabled button (its span carries it), then hides it again. */
async function tooltipOf(button: HTMLElement): Promise<string> {
  await userEvent.hover(button.parentElement!);
  const text = (await screen.findByRole('tooltip')).textContent ?? '';
  await userEvent.unhover(button.parentElement!);
  await waitFor(() => expect(screen.queryByRole('tooltip')).toBeNull());
  return text;
}

describe('WaitingRelease', () => {
  it('shows what the release waits for and who must approve it; its author may reject it but not approve it, and is told why', async () => {
    await renderDeploymentsCard(
      withReleases([
        waitingRelease({ createdBy: 'user:default/alice via scaffolder' }),
      ]),
      { user: 'user:default/alice' },
    );
    const region = await waiting();
    expect(
      within(region).getByTestId('fleet-release-status'),
    ).toHaveTextContent('Waiting for approval');
    expect(region).toHaveTextContent('payments:1.5.0 to stage prod');
    expect(
      within(region).getByTestId('fleet-release-approvals'),
    ).toHaveTextContent('Needs 1 approval from release-managers (0 given)');
    const reject = within(region).getByRole('button', { name: 'Reject' });
    await waitFor(() => expect(reject).toBeEnabled());
    const approve = within(region).getByRole('button', { name: 'Approve' });
    expect(approve).toBeDisabled();
    await userEvent.hover(approve.parentElement!);
    expect(await screen.findByRole('tooltip')).toHaveTextContent(
      AUTHOR_APPROVAL_TEXT,
    );
    expect(AUTHOR_APPROVAL_TEXT).toBe(
      'You started this release: someone else must approve it',
    );
    expect(screen.queryByText('No release under way.')).toBeNull();
  });

  it('lets another user approve with a comment, overriding the freeze window, then refreshes', async () => {
    const api = withReleases([frozenRelease()], {
      approveRelease: jest.fn().mockResolvedValue(frozenRelease()),
    });
    await renderDeploymentsCard(api, {
      user: 'user:default/bob',
      groups: RELEASE_MANAGERS,
    });
    const region = await waiting();
    expect(
      within(region).getByTestId('fleet-release-status'),
    ).toHaveTextContent(/^Waiting for freeze window friday-freeze until .+/);
    expect(
      within(region).getByTestId('fleet-release-window'),
    ).toHaveTextContent(
      /Held by freeze window friday-freeze on sim-2, closes .+/,
    );
    expect(
      within(region).getByTestId('fleet-release-approvals'),
    ).toHaveTextContent('(1 given)');
    expect(
      within(region).getByRole('list', { name: 'Decisions' }),
    ).toHaveTextContent('carol approved: “numbers look fine” (just now)');
    const approve = within(region).getByRole('button', { name: 'Approve' });
    await waitFor(() => expect(approve).toBeEnabled());
    await userEvent.click(approve);
    const dialog = await screen.findByRole('dialog', {
      name: 'Approve the release of payments',
    });
    await userEvent.type(
      within(dialog).getByRole('textbox', { name: 'Comment' }),
      'hotfix, agreed with ops',
    );
    // Approving a release the window holds overrides it: the API refuses it otherwise.
    expect(dialog).toHaveTextContent(
      'Approving overrides freeze window friday-freeze: the release starts inside the window now.',
    );
    expect(dialog).not.toHaveTextContent('counts towards');
    const confirm = within(dialog).getByRole('button', { name: 'Approve' });
    expect(confirm).toBeDisabled();
    await userEvent.click(
      within(dialog).getByRole('checkbox', {
        name: 'Override the freeze window',
      }),
    );
    expect(confirm).toBeEnabled();
    const before = api.listReleases.mock.calls.length;
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Approve' }),
    );
    await waitFor(() =>
      expect(api.approveRelease).toHaveBeenCalledWith('rel-9', {
        comment: 'hotfix, agreed with ops',
        overrideFreeze: true,
      }),
    );
    await waitFor(() =>
      expect(api.listReleases.mock.calls.length).toBeGreaterThan(before),
    );
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('offers no freeze override on a release no window holds, and shows the API refusal in its words (the catalog, not the token, decides)', async () => {
    const refused = await ResponseError.fromResponse(
      new Response(
        JSON.stringify({
          error: {
            name: 'NotAllowedError',
            message:
              'user:default/bob is in none of the groups that approve prod: group:default/release-managers',
          },
        }),
        { status: 403, headers: { 'Content-Type': 'application/json' } },
      ) as any,
    );
    const api = withReleases([waitingRelease()], {
      approveRelease: jest.fn().mockRejectedValue(refused),
    });
    await renderDeploymentsCard(api, {
      user: 'user:default/bob',
      groups: RELEASE_MANAGERS,
    });
    const approve = within(await waiting()).getByRole('button', {
      name: 'Approve',
    });
    await waitFor(() => expect(approve).toBeEnabled());
    await userEvent.click(approve);
    const dialog = await screen.findByRole('dialog', {
      name: 'Approve the release of payments',
    });
    expect(dialog).toHaveTextContent(
      'Your approval counts towards the 1 approval the stage requires',
    );
    expect(within(dialog).queryByRole('checkbox')).toBeNull();
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Approve' }),
    );
    expect(api.approveRelease).toHaveBeenCalledWith('rel-9', {});
    expect(await within(dialog).findByRole('alert')).toHaveTextContent(
      'user:default/bob is in none of the groups that approve prod',
    );
  });

  it('rejects with a comment, the author too', async () => {
    const api = withReleases([waitingRelease()], {
      rejectRelease: jest
        .fn()
        .mockResolvedValue(waitingRelease({ status: 'REJECTED' })),
    });
    await renderDeploymentsCard(api, { user: 'user:default/alice' });
    const reject = within(await waiting()).getByRole('button', {
      name: 'Reject',
    });
    await waitFor(() => expect(reject).toBeEnabled());
    await userEvent.click(reject);
    const dialog = await screen.findByRole('dialog', {
      name: 'Reject the release of payments',
    });
    await userEvent.type(
      within(dialog).getByRole('textbox', { name: 'Comment' }),
      'wrong image',
    );
    await userEvent.click(
      within(dialog).getByRole('button', { name: 'Reject' }),
    );
    await waitFor(() =>
      expect(api.rejectRelease).toHaveBeenCalledWith('rel-9', {
        comment: 'wrong image',
      }),
    );
    expect(api.approveRelease).not.toHaveBeenCalled();
  });

  it('disables Approve and Reject without fleet.release.approve', async () => {
    await renderDeploymentsCard(withReleases([waitingRelease()]), {
      user: 'user:default/bob',
      permissionApi: mockApis.permission({
        authorize: r =>
          r.permission.name === 'fleet.release.approve'
            ? AuthorizeResult.DENY
            : AuthorizeResult.ALLOW,
      }),
    });
    const region = await waiting();
    const approve = within(region).getByRole('button', { name: 'Approve' });
    await waitFor(() => expect(approve).toBeDisabled());
    await screen.findByRole('button', { name: 'Release' });
    await waitFor(() =>
      expect(screen.getByRole('button', { name: 'Release' })).toBeEnabled(),
    );
    expect(approve).toBeDisabled();
    expect(
      within(region).getByRole('button', { name: 'Reject' }),
    ).toBeDisabled();
  });

  it('disables Approve and Reject for someone in none of the approver groups, and says who may', async () => {
    await renderDeploymentsCard(
      withReleases([
        waitingRelease({
          gate: {
            ...waitingRelease().gate!,
            approvals: {
              groups: ['group:default/release-managers', 'group:default/sre'],
              count: 2,
            },
          },
        }),
      ]),
      { user: 'user:default/bob', groups: ['group:default/payments-team'] },
    );
    const region = await waiting();
    const approve = within(region).getByRole('button', { name: 'Approve' });
    const reject = within(region).getByRole('button', { name: 'Reject' });
    await waitFor(() => expect(approve).toBeDisabled());
    // Still disabled once every answer is in: the permissions allow, the claims do not.
    await waitFor(() =>
      expect(screen.getByRole('button', { name: 'Release' })).toBeEnabled(),
    );
    expect(approve).toBeDisabled();
    expect(reject).toBeDisabled();
    const reason =
      'Only members of release-managers or sre may approve this release';
    expect(await tooltipOf(approve)).toBe(reason);
    expect(await tooltipOf(reject)).toBe(reason);
  });

  it('enables Approve and Reject for a member of an approver group, however the claim is spelled', async () => {
    await renderDeploymentsCard(withReleases([waitingRelease()]), {
      user: 'user:default/bob',
      groups: ['Group:Default/Release-Managers'],
    });
    const region = await waiting();
    await waitFor(() =>
      expect(
        within(region).getByRole('button', { name: 'Approve' }),
      ).toBeEnabled(),
    );
    expect(
      within(region).getByRole('button', { name: 'Reject' }),
    ).toBeEnabled();
  });

  it('disables deciding on a release only a freeze window holds without fleet.release.manage', async () => {
    await renderDeploymentsCard(withReleases([windowOnlyRelease()]), {
      user: 'user:default/bob',
      permissionApi: withoutReleaseManage(),
    });
    const region = await waiting();
    expect(screen.queryByTestId('fleet-release-approvals')).toBeNull();
    const approve = within(region).getByRole('button', { name: 'Approve' });
    const reject = within(region).getByRole('button', { name: 'Reject' });
    await waitFor(() => expect(approve).toBeDisabled());
    await waitFor(() => expect(reject).toBeDisabled());
    const reason =
      'You are not allowed to release payments, so not to override its freeze window';
    expect(await tooltipOf(approve)).toBe(reason);
    expect(await tooltipOf(reject)).toBe(reason);
  });

  it('lets the author withdraw a release only a freeze window holds without fleet.release.manage', async () => {
    await renderDeploymentsCard(withReleases([windowOnlyRelease()]), {
      user: 'user:default/alice',
      permissionApi: withoutReleaseManage(),
    });
    const region = await waiting();
    await waitFor(() =>
      expect(
        within(region).getByRole('button', { name: 'Reject' }),
      ).toBeEnabled(),
    );
    expect(
      within(region).getByRole('button', { name: 'Approve' }),
    ).toBeDisabled();
  });

  it('lets someone who may release the component approve a release only a freeze window holds, overriding it', async () => {
    const api = withReleases([windowOnlyRelease()], {
      approveRelease: jest.fn().mockResolvedValue(windowOnlyRelease()),
    });
    await renderDeploymentsCard(api, { user: 'user:default/bob' });
    const region = await waiting();
    const approve = within(region).getByRole('button', { name: 'Approve' });
    await waitFor(() => expect(approve).toBeEnabled());
    expect(
      within(region).getByRole('button', { name: 'Reject' }),
    ).toBeEnabled();
    await userEvent.click(approve);
    const dialog = await screen.findByRole('dialog', {
      name: 'Approve the release of payments',
    });
    expect(dialog).not.toHaveTextContent('counts towards');
    const confirm = within(dialog).getByRole('button', { name: 'Approve' });
    expect(confirm).toBeDisabled();
    await userEvent.click(
      within(dialog).getByRole('checkbox', {
        name: 'Override the freeze window',
      }),
    );
    await userEvent.click(confirm);
    await waitFor(() =>
      expect(api.approveRelease).toHaveBeenCalledWith('rel-9', {
        overrideFreeze: true,
      }),
    );
  });

  it('lists a rejected release in the history with who rejected it and why', async () => {
    const rejected = waitingRelease({
      status: 'REJECTED',
      gate: {
        ...waitingRelease().gate!,
        decisions: [
          {
            actor: 'user:default/bob',
            decision: 'REJECTED',
            comment: 'too risky before the sale',
            overrideFreeze: false,
            at: new Date().toISOString(),
          },
        ],
      },
    });
    await renderDeploymentsCard(withReleases([rejected]));
    const history = await screen.findByRole('table', {
      name: 'Release history',
    });
    expect(within(history).getAllByRole('row')[1]).toHaveTextContent(
      /Rejected.*payments:1\.5\.0.*Stage prod\. Rejected by bob: “too risky before the sale”/,
    );
    expect(
      screen.queryByRole('region', { name: 'Waiting release' }),
    ).toBeNull();
  });
});
