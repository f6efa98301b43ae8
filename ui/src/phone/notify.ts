// Notifications on the phone while the page is open in the background: asked for on a tap
// (browsers allow the question only then), shown through the service worker where there is one
// (Android's Chrome requires it), opening the page on the newest item. With the page closed,
// the ntfy push is what reaches the phone.

export type Permission = NotificationPermission | 'unsupported';

export function permission(): Permission {
  return typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;
}

export async function askPermission(): Promise<Permission> {
  if (typeof Notification === 'undefined') return 'unsupported';
  return Notification.requestPermission();
}

export function waitingText(count: number): string {
  return count === 1 ? '1 approval waiting' : `${count} approvals waiting`;
}

export async function notifyWaiting(count: number, newest: string): Promise<void> {
  if (permission() !== 'granted' || document.visibilityState === 'visible' || count === 0) return;
  const options: NotificationOptions = {
    body: waitingText(count),
    tag: 'airlock-waiting',
    data: { url: `/#item=${encodeURIComponent(newest)}` },
  };
  const registration = await navigator.serviceWorker?.getRegistration().catch(() => undefined);
  if (registration) await registration.showNotification('Airlock', options);
  else new Notification('Airlock', options);
}

/** The service worker makes the page installable and its notifications clickable. It cannot
 * register while the phone does not trust Airlock's certificate; the page works without it. */
export function registerServiceWorker(): void {
  navigator.serviceWorker?.register('/sw.js').catch(() => undefined);
}
