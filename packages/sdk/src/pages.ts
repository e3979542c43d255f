import type { Page } from "@prim/wire";

export interface PageOptions {
  limit?: number;
  cursor?: string;
}

/** Every item of a paged list, following `next_cursor` page by page (one request per page). */
export async function* everyItem<T>(page: (cursor: string | undefined) => Promise<Page<T>>): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const current = await page(cursor);
    yield* current.data;
    cursor = current.next_cursor ?? undefined;
  } while (cursor !== undefined);
}
