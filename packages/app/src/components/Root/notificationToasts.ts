import type { NotificationSnackbarProperties } from '@backstage/plugin-notifications';

/**
 * The toasts of new notifications: one at a time, for 8 seconds. A newer piece of news (a release
 * that started, a cluster that came back) replaces the one on screen instead of piling up under
 * older toasts about a release that has since moved on.
 */
export const notificationToasts: NotificationSnackbarProperties = {
  enabled: true,
  autoHideDuration: 8_000,
  maxSnack: 1,
};
