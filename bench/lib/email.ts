/**
 * The benchmark email: about 20 KB of HTML with 30 tracked links, the pixel and unsubscribe
 * placeholders, written the way a marketer's template looks (tables, inline styles, paragraphs).
 */
export const LINKS = 30;

export function benchEmailHtml(links = LINKS, targetBytes = 20 * 1024): string {
  const head = '<!doctype html><html><head><meta charset="utf-8"><title>News</title></head><body style="margin:0;padding:0;background:#f4f4f4">';
  const blocks: string[] = [];
  for (let i = 0; i < links; i++) {
    blocks.push(
      `<tr><td style="padding:12px 24px;font-family:Helvetica,Arial,sans-serif;font-size:15px;line-height:22px;color:#333333">` +
        `<h2 style="margin:0 0 8px 0;font-size:18px">Story ${i + 1}: what changed this week</h2>` +
        `<p style="margin:0 0 8px 0">${'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. '.repeat(2)}</p>` +
        `<a href="https://example.com/articles/${i + 1}?utm_source=newsletter&amp;utm_medium=email" style="color:#0066cc">Read story ${i + 1}</a></td></tr>`,
    );
  }
  let body = `<table role="presentation" width="100%" cellpadding="0" cellspacing="0">${blocks.join('')}</table>`;
  const tail = '<p style="font-size:12px;color:#999">You get this because you subscribed. <a href="{notify_unsubscribe_url}">Unsubscribe</a></p>{notify_tracking_pixel}</body></html>';
  const filler = '<p style="margin:0;color:#ffffff;font-size:1px">&nbsp;</p>';
  while ((head + body + tail).length < targetBytes) body += filler;
  return head + body + tail;
}
