import type { QueueInbox } from "./inbox.js";
import type { QueueStore } from "./store.js";
import type { Waiters } from "./waiters.js";

/** What queue operations get as their store: the jobs and the parked long polls over them. */
export interface QueueHandle {
  store: QueueStore;
  waiters: Waiters;
  /** Messages from db outboxes of the group, each taken in once (inbox.ts). */
  inbox: QueueInbox;
}
