/**
 * A search's page with LangGraph's paging headers (`langgraph_api.utils.get_pagination_headers`):
 * `X-Pagination-Next`, the offset of the next page, when there is more; `X-Pagination-Total`,
 * how many there are as far as this page knows (`offset + page` on the last page, `next + 1`
 * before it). The JS SDK's `includePagination` reads `X-Pagination-Next`.
 */
import type { Response } from 'express';

/**
 * The page of `found` (which holds at least `offset + limit + 1` items when there is more),
 * its headers set on `response`.
 */
export function pageOf<T>(found: readonly T[], offset: number, limit: number, response: Response): T[] {
  const page = found.slice(offset, offset + limit);
  const next = offset + limit;
  if (found.length > next) {
    response.setHeader('X-Pagination-Next', String(next));
    response.setHeader('X-Pagination-Total', String(next + 1));
  } else response.setHeader('X-Pagination-Total', String(offset + page.length));
  return page;
}
