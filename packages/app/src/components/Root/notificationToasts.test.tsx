import {
  NotificationsSidebarItem,
  notificationsApiRef,
  notificationsPlugin,
  type NotificationsApi,
} from '@backstage/plugin-notifications';
import { createApiRef } from '@backstage/core-plugin-api';
import { signalApiRef, type SignalApi } from '@backstage/plugin-signals-react';
import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
import { act, screen, waitFor } from '@testing-library/react';
import { notificationToasts } from './notificationToasts';

/**
 * The new frontend system's toast API, which the sidebar item asks for (to say when a notification
 * could not be read): APIs are found by id, so this ref stands for `@backstage/frontend-plugin-api`'s.
 */
const toastApiRef = createApiRef<{ post(toast: unknown): void }>({
  id: 'core.toast',
});

/** A signals API whose `notifications` channel the test speaks on. */
function signals() {
  const listeners: Array<(message: unknown) => void> = [];
  const api: SignalApi = {
    subscribe(_channel, onMessage) {
      listeners.push(onMessage as (message: unknown) => void);
      return { unsubscribe: () => {} };
    },
  };
  const send = (message: unknown) => listeners.forEach(l => l(message));
  return { api, send };
}

const titles: Record<string, string> = {
  'n-1': 'payments: release to sim-1 completed',
  'n-2': 'payments: release to sim-2 started',
};

describe('notification toasts', () => {
  it('shows one at a time: a newer notification replaces the toast of an older one', async () => {
    const { api: signalApi, send } = signals();
    const notificationsApi = {
      getStatus: jest.fn(async () => ({ unread: 0, read: 0 })),
      getNotification: jest.fn(async (id: string) => ({
        id,
        user: 'user:default/guest',
        created: new Date(),
        origin: 'plugin:fleet',
        payload: { title: titles[id], severity: 'normal' },
      })),
    } as unknown as NotificationsApi;
    await renderInTestApp(
      <TestApiProvider
        apis={[
          [notificationsApiRef, notificationsApi],
          [signalApiRef, signalApi],
          [toastApiRef, { post: jest.fn() }],
        ]}
      >
        <NotificationsSidebarItem snackbarProps={notificationToasts} />
      </TestApiProvider>,
      { mountedRoutes: { '/notifications': notificationsPlugin.routes.root } },
    );
    await waitFor(() => expect(notificationsApi.getStatus).toHaveBeenCalled());
    act(() => send({ action: 'new_notification', notification_id: 'n-1' }));
    expect(await screen.findByText(titles['n-1'])).toBeInTheDocument();
    act(() => send({ action: 'new_notification', notification_id: 'n-2' }));
    expect(await screen.findByText(titles['n-2'])).toBeInTheDocument();
    await waitFor(() =>
      expect(screen.queryByText(titles['n-1'])).not.toBeInTheDocument(),
    );
  });
});
