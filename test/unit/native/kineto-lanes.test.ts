// Issue 14: a Kineto trace's thread id was shown as a rank ("rank 2910249"). Every real Kineto trace in
// ../shared/fixtures-real (read in place) gives lanes of a rank inside the run's world, named by what they are (the
// CPU thread or a CUDA stream), and every span sits on a lane of its own rank.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { importMeasurementBytes } from '../../../src/native/import/index';
import { needShared } from '../requirements';

const FIXTURES = resolve(import.meta.dirname, '..', '..', '..', '..', 'shared', 'fixtures-real');
const skip = needShared(FIXTURES, '../shared/fixtures-real');
const files = skip ? [] : readdirSync(FIXTURES).filter((f) => f.startsWith('kineto-') && !f.endsWith('.md'));

test('the real Kineto traces are all here', { skip }, () => {
  assert.ok(files.length >= 7, files.join(', '));
});

for (const file of files) {
  test(`${file}: lanes are ranks of the run (CPU or a stream), never a thread id`, { skip }, () => {
    const result = importMeasurementBytes(readFileSync(resolve(FIXTURES, file)), {
      fileName: file,
      gunzip: (b) => gunzipSync(b),
    });
    const trace = result.trace!;
    assert.ok(trace.lanes.length > 0 && trace.spans.length > 0);
    const world = trace.metadata.ranks;
    for (const lane of trace.lanes) {
      assert.ok(
        lane.rank !== undefined && lane.rank >= 0 && lane.rank < world,
        `${lane.label}: rank ${lane.rank} of ${world}`,
      );
      assert.match(lane.label, new RegExp(`^rank ${lane.rank} · (CPU|stream \\d+)$`));
    }
    const laneRank = new Map(trace.lanes.map((lane) => [lane.id, lane.rank]));
    for (const span of trace.spans) assert.equal(span.rank, laneRank.get(span.lane), span.name);
  });
}
