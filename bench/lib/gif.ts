/** The 43-byte transparent 1x1 GIF, the same bytes the open endpoint answers with. */
export const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');
export const GIF_HEADERS = { 'content-type': 'image/gif', 'content-length': String(GIF.length), 'cache-control': 'no-store, max-age=0' };
