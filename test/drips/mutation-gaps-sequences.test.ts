// Sequences, enrolments and the enrollments page through the library, where the HTTP tests do not reach:
// what each refusal says and names, look-ups by odd ids and names, triggers on new and existing lists.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { listEnrollments } from '../../src/core/enrollment-list.ts';
import { isNotifyError, NotifyError } from '../../src/errors.ts';
import { ENGINES } from '../helpers/engines.ts';
import { dripWorld } from './helpers.ts';

const STEP = { delayMinutes: 0, subject: 'Hi', html: '<p>x</p>' };
/** the refusal's code, message and details, or a failure when nothing was refused */
const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (err) {
    assert.ok(isNotifyError(err), String(err));
    return { code: err.code, message: err.message, details: err.details, cause: (err as Error).cause };
  }
  assert.fail('not refused');
};

for (const engine of ENGINES) {
  describe(`sequences, enrolments and the enrollments page, bad and odd input [${engine}]`, () => {
    test('createSequence: each refusal names its field', async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      const bad = (input: unknown) => refusal(w.notify.drips.createSequence(input as never));
      assert.match((await bad('welcome')).message, /needs \{ name, steps \}/);
      assert.deepEqual((await bad({ name: 5, steps: [STEP] })).details, { field: 'name' });
      assert.deepEqual(await bad({ name: '   ', steps: [STEP] }), { code: 'INVALID_INPUT', message: 'A sequence needs a name', details: { field: 'name' }, cause: undefined });
      const many = await bad({ name: 'x', steps: Array.from({ length: 101 }, () => STEP) });
      assert.deepEqual([many.message, many.details], ['A sequence needs 1 to 100 steps', { field: 'steps' }]);
      for (const step of [null, 'step']) assert.deepEqual(await bad({ name: 'x', steps: [STEP, step] }), { code: 'INVALID_INPUT', message: 'steps[1] must be an object', details: { field: 'steps[1]' }, cause: undefined });
      const late = await bad({ name: 'x', steps: [{ ...STEP, delayMinutes: 10 * 366 * 24 * 60 + 1 }] });
      assert.deepEqual([late.message, late.details], ['steps[0].delayMinutes must be a whole number of minutes from 0 to 5270400', { field: 'steps[0].delayMinutes' }]);
      const body = await bad({ name: 'x', steps: [STEP, { delayMinutes: 1, subject: 's', html: 'h', markdown: 'm' }] });
      assert.equal(body.details?.step, 1);
      assert.ok(body.cause instanceof NotifyError, 'the step check that failed is the cause');
      assert.equal(await w.notify.drips.getSequence('x'), undefined, 'nothing stored');
      // the bounds themselves are accepted
      await w.notify.drips.createSequence({ name: 'long', steps: [{ ...STEP, delayMinutes: 10 * 366 * 24 * 60 }] });
      assert.equal((await w.notify.drips.createSequence({ name: 'hundred', steps: Array.from({ length: 100 }, () => STEP) })).steps.length, 100);
    });

    test('a step from markdownFile keeps its file name', async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'notify-drip-md-'));
      writeFileSync(join(dir, 'welcome.md'), '# Welcome');
      const w = await dripWorld(engine, { markdownPath: dir });
      t.after(async () => {
        await w.close();
        rmSync(dir, { recursive: true, force: true });
      });
      const seq = await w.notify.drips.createSequence({ name: 'md', steps: [{ delayMinutes: 0, subject: 's', markdownFile: 'welcome.md' }] });
      assert.deepEqual([seq.steps[0].markdown_file, seq.steps[0].html, seq.steps[0].markdown], ['welcome.md', null, null]);
    });

    test('triggers: a list made private when missing, an existing list reused; anything else refused with the field', async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      const seq = await w.notify.drips.createSequence({ name: 'a', steps: [STEP], trigger: { listJoined: 'fresh' } });
      const fresh = (await w.notify.lists.list()).find((l) => l.name === 'fresh');
      assert.equal(fresh?.public, false);
      assert.deepEqual(seq.trigger, { listJoined: 'fresh' });
      const again = await w.notify.drips.createSequence({ name: 'b', steps: [STEP], trigger: { listJoined: 'fresh' } });
      assert.deepEqual(again.trigger, { listJoined: 'fresh' });
      assert.equal((await w.notify.lists.list()).filter((l) => l.name === 'fresh').length, 1, 'the same list, not a second one');
      for (const trigger of ['fresh', { listJoined: 'fresh', extra: 1 }, { listjoined: 'fresh' }, {}]) {
        assert.deepEqual(await refusal(w.notify.drips.createSequence({ name: 'c', steps: [STEP], trigger } as never)), {
          code: 'INVALID_INPUT',
          message: 'trigger must be { listJoined: <list name> }',
          details: { field: 'trigger' },
          cause: undefined,
        });
      }
      assert.equal((await refusal(w.notify.drips.createSequence({ name: 'c', steps: [STEP], trigger: { listJoined: '' } }))).details?.field, 'trigger.listJoined');
    });

    test('enroll: each refusal names its field; getSequence and getEnrollment answer odd keys with nothing', async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      const d = w.notify.drips;
      const ann = await w.notify.contacts.upsert({ email: 'ann@example.com' });
      await w.notify.contacts.upsert({ email: 'bo@example.com', status: 'bounced' });
      // ids 1 to 12, so that a two-digit name can be an id
      for (let i = 1; i <= 12; i++) await d.createSequence({ name: `s${i}`, steps: [STEP] });
      assert.match((await refusal(d.enroll(null as never))).message, /needs \{ contact, sequence \}/);
      assert.deepEqual(await refusal(d.enroll({ contact: true, sequence: 's1' } as never)), {
        code: 'INVALID_INPUT',
        message: 'enroll: contact must be a contact id or email address',
        details: { field: 'contact' },
        cause: undefined,
      });
      assert.deepEqual(await refusal(d.enroll({ contact: ann.id, sequence: { id: 1 } } as never)), {
        code: 'INVALID_INPUT',
        message: 'enroll: sequence must be a sequence id or name',
        details: { field: 'sequence' },
        cause: undefined,
      });
      assert.deepEqual((await refusal(d.enroll({ contact: 'no@example.com', sequence: 's1' }))).details, { field: 'contact' });
      assert.deepEqual((await refusal(d.enroll({ contact: ann.id, sequence: 'nope' }))).details, { field: 'sequence' });
      const bounced = await w.notify.contacts.get('bo@example.com');
      assert.deepEqual((await refusal(d.enroll({ contact: 'bo@example.com', sequence: 's1' }))).details, { contactId: bounced?.id, status: 'bounced' });

      assert.equal((await d.getSequence('12'))?.name, 's12', 'a name of digits finds the sequence by id');
      // Number(' 12') is 12: only digits from end to end are an id
      for (const key of ['x12', '12x', ' 12', '12 ', ' ', '', '1234567890123456', null, { id: 1 }, 0, -1, 1.5, 2 ** 53]) {
        assert.equal(await d.getSequence(key as never), undefined, `getSequence(${JSON.stringify(key)})`);
      }
      const e = await d.enroll({ contact: ann.id, sequence: '12' });
      assert.equal(e.sequence_id, 12);
      for (const id of [0, -1, 1.5, 2 ** 53, Number.NaN]) assert.equal(await d.getEnrollment(id), undefined, `getEnrollment(${id})`);
    });

    test('the enrollments page: limit bounds, status and cursor refusals say what is wrong', async (t) => {
      const w = await dripWorld(engine);
      t.after(() => w.close());
      const seq = await w.notify.drips.createSequence({ name: 'p', steps: [STEP] });
      for (const email of ['a@example.com', 'b@example.com']) {
        await w.notify.contacts.upsert({ email });
        await w.notify.drips.enroll({ contact: email, sequence: seq.id });
      }
      const page = (query: object) => listEnrollments(w.notify.context, seq.id, query);
      assert.equal((await page({ limit: 1000 })).enrollments.length, 2);
      assert.deepEqual(await refusal(page({ limit: 1001 })), { code: 'INVALID_INPUT', message: 'limit must be a whole number from 1 to 1000', details: { field: 'limit' }, cause: undefined });
      const status = await refusal(page({ status: 'gone' }));
      assert.deepEqual([status.code, status.message, status.details], ['INVALID_INPUT', 'status must be one of active, processing, completed, failed, cancelled', { field: 'status' }]);
      const cursor = (text: string) => Buffer.from(text).toString('base64url');
      for (const after of [cursor('xe:1'), cursor('e:1x'), 'garbage']) {
        assert.deepEqual(await refusal(page({ after })), { code: 'INVALID_INPUT', message: 'after must be the `next` cursor of a previous page', details: { field: 'after' }, cause: undefined });
      }
      const first = await page({ limit: 1 });
      assert.deepEqual((await page({ after: cursor(`e:${first.enrollments[0].id}`) })).enrollments.length, 1);
      assert.deepEqual(await page({ after: cursor('e:12') }), { enrollments: [], next: null }, 'an id of two digits');
    });
  });
}
