// The console's only script (served from /notify/admin/console.js under a script-src 'self' policy).
// Every page works without it; it only makes the compose page live and polls import progress.
(() => {
  const debounce = (fn, ms) => {
    let t;
    return () => {
      clearTimeout(t);
      t = setTimeout(fn, ms);
    };
  };

  const compose = document.getElementById('compose-form');
  if (compose) {
    const previewButton = document.getElementById('preview-button');
    const count = document.getElementById('audience-count');
    // the preview is the form posted into the sandboxed frame, exactly what the button does
    const preview = debounce(() => compose.requestSubmit(previewButton), 500);
    const audience = debounce(async () => {
      const data = new FormData(compose);
      const body = new URLSearchParams({ csrf: data.get('csrf'), list: data.get('list'), segment: data.get('segment') });
      count.textContent = 'counting…';
      try {
        const res = await fetch('/notify/admin/audience', { method: 'POST', body, credentials: 'same-origin' });
        const out = await res.json();
        count.textContent = res.ok ? `${out.count} contact${out.count === 1 ? '' : 's'} would receive it now` : out.error;
      } catch {
        count.textContent = 'could not count';
      }
    }, 400);
    compose.addEventListener('input', (e) => {
      if (e.target.name === 'list' || e.target.name === 'segment') audience();
      else preview();
    });
    compose.addEventListener('change', (e) => {
      if (e.target.name === 'list') audience();
      if (e.target.name === 'format') preview();
    });
    audience();
    preview();
  }

  const job = document.getElementById('import-job');
  if (job) {
    const url = `/notify/admin/imports/${encodeURIComponent(job.dataset.id)}.json`;
    const bar = document.getElementById('import-progress');
    const status = document.getElementById('import-status');
    const poll = async () => {
      const res = await fetch(url, { credentials: 'same-origin' });
      if (!res.ok) return;
      const j = await res.json();
      bar.value = j.bytes_total ? j.bytes_read / j.bytes_total : 1;
      status.textContent = `${j.status}: ${j.rows} rows read, ${j.created} created, ${j.updated} updated, ${j.unchanged} unchanged, ${j.rejected} rejected${j.error ? ` (${j.error})` : ''}`;
      if (j.status === 'running') setTimeout(poll, 500);
      else location.reload();
    };
    if (job.dataset.status === 'running') poll();
  }
})();
