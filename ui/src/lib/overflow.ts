// Tells whether an element's text is cut by `text-overflow: ellipsis`, so a row that shows
// arguments can say it did not show them all (an ellipsis alone is easy to miss).
import type { Action } from 'svelte/action';

/** Calls `report` with whether `node` is wider than its box, now and whenever its size changes. */
export const reportOverflow: Action<HTMLElement, (overflows: boolean) => void> = (node, report) => {
  let current = report;
  const check = () => current(node.scrollWidth > node.clientWidth);
  const observer = new ResizeObserver(check);
  observer.observe(node);
  check();
  return {
    update(next) {
      current = next;
      check();
    },
    destroy() {
      observer.disconnect();
    },
  };
};
