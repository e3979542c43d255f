import type Database from "better-sqlite3";
import type { Clock } from "../../core/clock.js";
import type { ChangeLog } from "../changes/log.js";
import { FsSearch } from "./search.js";
import { FsStore } from "./store.js";
import { FsTree } from "./tree.js";

/** What the engine keeps open per `fs` primitive: the tree, its moves and forks, its search index. */
export interface FsHandle {
  store: FsStore;
  tree: FsTree;
  search: FsSearch;
}

export function openFs(db: Database.Database, clock: Clock, changes: ChangeLog): FsHandle {
  const store = new FsStore(db, clock, changes);
  return { store, tree: new FsTree(store), search: new FsSearch(store) };
}
