// Fuzzes the boundary between webviews and the extension host: any value a webview can post (structured-clone
// data, here arbitrary JSON-like values and near-miss protocol messages) goes through the validator and the
// dispatcher. Nothing may throw, an invalid message never reaches a handler, a valid one reaches exactly its own,
// panel state restored after a reload is sanitised, and a span's source path never opens a file outside the
// workspace.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { posix } from 'node:path';
import fc from 'fast-check';
import {
  isValidationError,
  validatePanelState,
  validateWebviewMessage,
  PANEL_KINDS,
  type FromWebview,
} from '../../../src/protocol';
import { createMessageDispatcher, isInsideFolders } from '../../../src/extension/glue/message-dispatch';
import { checkInput, fuzz, reportCounts, unreadableReason } from './harness';
import { FUZZ_PLAN } from './plan';

after(() => reportCounts('webview messages'));

const TYPES = [
  'ready',
  'openSource',
  'selectSpan',
  'requestRange',
  'exportTrace',
  'log',
  'Ready',
  '__proto__',
  'constructor',
  'toString',
  '',
];
const FIELDS = ['panel', 'file', 'line', 'spanIndex', 'startUs', 'endUs', 'level', 'message', 'extra', '__proto__'];
const fieldValue = fc.oneof(
  fc.constantFrom(
    ...PANEL_KINDS,
    'info',
    'warn',
    'debug',
    '/ws/project/train.py',
    '../../etc/passwd',
    '',
    'x'.repeat(9000),
    0,
    1,
    -1,
    2 ** 32,
    1.5,
    Number.NaN,
    Infinity,
    null,
    true,
    [],
    {},
  ),
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double(),
);

/** Messages that are almost right: a known or unknown type with a random subset of real and fake fields. */
const nearMiss = fc
  .record({
    type: fc.constantFrom(...TYPES),
    fields: fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 4 }),
  })
  .map(({ type, fields }) => ({ type, ...fields }));

const message = fc.oneof({ weight: 3, arbitrary: nearMiss }, { weight: 1, arbitrary: fc.anything({ maxDepth: 3 }) });

test('every posted value is validated, and only valid messages reach their own handler', async () => {
  const pending: Promise<void>[] = [];
  fuzz(message, FUZZ_PLAN.webviewMessages, (raw) => {
    const text = (() => {
      try {
        return JSON.stringify(raw) ?? String(raw);
      } catch {
        return String(raw);
      }
    })();
    checkInput(
      'webview message',
      text,
      () => validateWebviewMessage(raw),
      (result) => {
        if (isValidationError(result)) return unreadableReason(result.error);
        const revalidated = validateWebviewMessage(structuredClone(result));
        return isValidationError(revalidated)
          ? `accepted, then rejected on a second look: ${revalidated.error}`
          : undefined;
      },
    );
    const seen: FromWebview[] = [];
    const warnings: string[] = [];
    const record = (m: FromWebview): void => {
      seen.push(m);
    };
    const dispatch = createMessageDispatcher(
      'fuzz',
      { ready: record, openSource: record, selectSpan: record, exportTrace: record, log: record },
      { warn: (w) => warnings.push(w), error: (e) => warnings.push(e) },
    );
    pending.push(
      dispatch(raw).then((outcome) => {
        const valid = !isValidationError(validateWebviewMessage(raw));
        assert.equal(outcome, valid ? 'handled' : 'invalid');
        assert.equal(seen.length, valid ? 1 : 0);
        if (valid) assert.equal(seen[0].type, (raw as FromWebview).type);
        else assert.equal(warnings.length, 1, 'an invalid message is logged once');
      }),
    );
  });
  await Promise.all(pending);
});

test('panel state handed back after a reload is sanitised', () => {
  const state = fc.oneof(
    fc.record(
      {
        panel: fc.constantFrom(...PANEL_KINDS, 'other'),
        source: fc.anything({ maxDepth: 2 }),
        viewStartUs: fieldValue,
        viewEndUs: fieldValue,
        filter: fieldValue,
        selectedSpan: fieldValue,
        data: fc.anything({ maxDepth: 2 }),
        channel: fieldValue,
        tab: fieldValue,
      },
      { requiredKeys: ['panel'] },
    ),
    fc.anything({ maxDepth: 3 }),
  );
  fuzz(state, FUZZ_PLAN.panelState, (raw) => {
    checkInput(
      'panel state',
      String(JSON.stringify(raw) ?? raw),
      () => validatePanelState(raw),
      (result) => {
        if (result === undefined) return undefined;
        if (!PANEL_KINDS.includes(result.panel)) return `panel '${String(result.panel)}' was let through`;
        const numbers = Object.entries(result)
          .filter(([k]) => /Us$|Px$|channel|selectedSpan/.test(k))
          .map(([, v]) => v);
        return numbers.every((v) => v === undefined || (typeof v === 'number' && Number.isFinite(v)))
          ? undefined
          : 'a non-finite number was kept';
      },
    );
  });
});

test('a source path from a webview never resolves outside the workspace folder', () => {
  const segment = fc.constantFrom(
    '..',
    '.',
    'src',
    'project',
    'ws',
    '',
    '~',
    '%2e%2e',
    '..\\..',
    'project-evil',
    '\0',
    'a b',
  );
  const path = fc
    .record({ absolute: fc.boolean(), parts: fc.array(segment, { maxLength: 8 }) })
    .map(({ absolute, parts }) => `${absolute ? '/' : ''}${parts.join('/')}`);
  const root = '/ws/project';
  fuzz(path, FUZZ_PLAN.workspacePaths, (file) => {
    const resolve = (p: string): string => posix.resolve(root, p);
    checkInput(
      'workspace path check',
      file,
      () => isInsideFolders(file, [root], resolve),
      (inside) => {
        const relative = posix.relative(root, resolve(file));
        const outside = relative === '..' || relative.startsWith('../') || posix.isAbsolute(relative);
        return inside && outside
          ? `'${file}' resolves to ${resolve(file)}, outside ${root}, yet was allowed`
          : undefined;
      },
    );
  });
});
