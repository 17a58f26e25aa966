import { skip } from './lib/report.ts';

/** process-drips with 4 workers vs 1 on PostgreSQL: goal >= 2x, zero duplicates. */
skip('process-drips 4 workers vs 1 [postgres]', 'notify:process-drips is not built yet');
