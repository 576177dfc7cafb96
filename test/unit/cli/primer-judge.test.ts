// Where a finding counts for a bug/fix pair (scripts/primer/judge.mjs): near a named line, in its function, or at the
// level of a class to which the fix adds a member it lacked, and nowhere else in the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error: a plain .mjs script without type declarations.
import { classChangedAt, inRegion, parseHunks, scopeRanges } from '../../../scripts/primer/judge.mjs';

// A Trainer subclass without `compute_loss`; the fix appends one after its last method (line 20).
const BUGGY = [
  'from transformers import Trainer', // 1
  '', // 2
  '', // 3
  'class PlainTrainer(Trainer):', // 4
  '    """A trainer with its own optimizer."""', // 5
  '', // 6
  '    label_key = "labels"', // 7
  '', // 8
  '    def __init__(self, extra, **kwargs):', // 9
  '        super().__init__(**kwargs)', // 10
  '        self.extra = extra', // 11
  '', // 12
  '    def create_optimizer(self):', // 13
  '        if self.optimizer is None:', // 14
  '            self.optimizer = build(self.model)', // 15
  '        return super().create_optimizer()', // 16
  '', // 17
  '    def create_scheduler(self, steps, optimizer=None):', // 18
  '        build_scheduler(self.args, steps, optimizer)', // 19
  '        return super().create_scheduler(steps, optimizer)', // 20
  '', // 21
  '', // 22
  'class Other:', // 23
  '    def run(self):', // 24
  '        return 1', // 25
].join('\n');

const ADDS_METHOD = [
  'diff --git a/t.py b/t.py',
  '--- a/t.py',
  '+++ b/t.py',
  '@@ -20,0 +21,5 @@ class PlainTrainer(Trainer):',
  '+',
  '+    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):',
  '+        loss = super().compute_loss(model, inputs, return_outputs, **kwargs)',
  '+        return loss / self.args.gradient_accumulation_steps',
].join('\n');

// The same fix written inside an existing method's body changes that method, not the class's members.
const EDITS_BODY = [
  '@@ -19 +19,2 @@ class PlainTrainer(Trainer):',
  '-        build_scheduler(self.args, steps, optimizer)',
  '+        build_scheduler(self.args, steps, optimizer)',
  '+        self.scaled = True',
].join('\n');

test('scopes are found by indentation, with the class body indentation', () => {
  const ranges = scopeRanges(BUGGY);
  const cls = ranges.find((r: { kind: string; start: number }) => r.kind === 'class' && r.start === 4);
  assert.deepEqual({ end: cls.end, bodyIndent: cls.bodyIndent }, { end: 20, bodyIndent: 4 });
  const scheduler = ranges.find((r: { kind: string; start: number }) => r.kind === 'def' && r.start === 18);
  assert.equal(scheduler.end, 20);
});

test('a fix that adds a method credits a finding at the class header or class level, not in other methods', () => {
  const ranges = scopeRanges(BUGGY);
  const hunks = parseHunks(ADDS_METHOD);
  const added = ADDS_METHOD.split('\n')
    .slice(4)
    .map((line) => line.slice(1));
  assert.deepEqual(hunks, [{ oldStart: 20, oldCount: 0, added }]);
  assert.equal(classChangedAt(BUGGY, ranges, hunks, 20)?.start, 4);
  // The class header and a class attribute are about the class; without the fix's hunks they are too far away.
  for (const line of [4, 7]) {
    assert.equal(inRegion(line, [20], BUGGY, hunks), true, `line ${line}`);
    assert.equal(inRegion(line, [20], BUGGY, []), false, `line ${line} without hunks`);
  }
  // A finding inside `__init__` or `create_optimizer` is about that method's code, not the class's.
  for (const line of [10, 11, 14]) assert.equal(inRegion(line, [20], BUGGY, hunks), false, `line ${line}`);
  // The old rules still hold: within five lines, or in the named line's function.
  assert.equal(inRegion(16, [20], BUGGY, hunks), true);
  assert.equal(inRegion(18, [20], BUGGY, []), true);
});

test('an edit of a method that was there, or a hunk in another class, gives no class-level credit', () => {
  const ranges = scopeRanges(BUGGY);
  assert.equal(classChangedAt(BUGGY, ranges, parseHunks(EDITS_BODY), 19), null);
  assert.equal(inRegion(4, [19], BUGGY, parseHunks(EDITS_BODY)), false);
  // A member added to `Other` says nothing about `PlainTrainer`, which holds the named line.
  const other = '@@ -25,0 +26,2 @@ class Other:\n+    def stop(self):\n+        return 0';
  assert.equal(classChangedAt(BUGGY, ranges, parseHunks(other), 20), null);
  assert.equal(inRegion(4, [20], BUGGY, parseHunks(other)), false);
  // A changed signature or a reassigned attribute edits members the class already had.
  const signature =
    '@@ -18 +18 @@\n-    def create_scheduler(self, steps, optimizer=None):\n+    def create_scheduler(self, steps, optimizer=None, scale=1):';
  assert.equal(classChangedAt(BUGGY, ranges, parseHunks(signature), 20), null);
  const attribute = '@@ -7 +7 @@\n-    label_key = "labels"\n+    label_key: str = "label_ids"';
  assert.equal(classChangedAt(BUGGY, ranges, parseHunks(attribute), 20), null);
  // A new class attribute is a member the class lacked, like a new method.
  const flag = '@@ -7,0 +8 @@\n+    model_accepts_loss_kwargs = False';
  assert.equal(classChangedAt(BUGGY, ranges, parseHunks(flag), 20)?.start, 4);
  // A method inserted after the blank lines that follow the class is still one of its members.
  const afterBlank = '@@ -22,0 +23,3 @@\n+    def compute_loss(self, model, inputs, **kwargs):\n+        return 0\n+';
  assert.equal(classChangedAt(BUGGY, ranges, parseHunks(afterBlank), 20)?.start, 4);
  // A top-level function appended after the class is not one of its members.
  const topLevel = '@@ -20,0 +21,2 @@\n+def helper():\n+    return 0';
  assert.equal(inRegion(4, [20], BUGGY, parseHunks(topLevel)), false);
});
