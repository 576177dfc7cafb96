// The reader of the docs' shell blocks: what counts as a command, its comment, its stated exit code and what it
// needs, and the problems that make a pasted example fail before it runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cliArguments, extractCommands, splitWords } from './shell-examples';

const fence = (language: string, ...lines: string[]): string => ['Some text.', '', '```' + language, ...lines, '```', ''].join('\n');

test('commands come from sh, bash, shell and console blocks only, with their line numbers', () => {
  const markdown = [
    fence('sh', 'node dist/cli.js simulate --system dgx-h100 --bytes 8M'),
    fence('text', 'node dist/cli.js not-a-command'),
    fence('', 'node dist/cli.js untagged'),
    fence('console', '$ collective-profiler sweep --system dgx-a100', 'output line that is not a command'),
    fence('yaml', 'nodes: 2'),
  ].join('\n');
  const { commands, problems } = extractCommands(markdown, 'x.md');
  // A command in a block without a language is not run, so it is a problem: the block must say it is shell.
  assert.deepEqual(problems, [
    `x.md:${markdown.split('\n').indexOf('node dist/cli.js untagged') + 1}: a command in a code block without a language; mark the block \`\`\`sh`,
  ]);
  assert.deepEqual(commands.map((c) => [c.line, c.text]), [
    [4, 'node dist/cli.js simulate --system dgx-h100 --bytes 8M'],
    [22, 'collective-profiler sweep --system dgx-a100'],
  ]);
  assert.deepEqual(cliArguments(commands[0]), ['simulate', '--system', 'dgx-h100', '--bytes', '8M']);
  assert.deepEqual(cliArguments(commands[1]), ['sweep', '--system', 'dgx-a100']);
});

test('comments give the expected exit code and the requirements; continuations and && are followed', () => {
  const markdown = fence(
    'bash',
    '# needs ../shared (real runs)',
    'node dist/cli.js verify --ranks 512 \\',
    '  --dtype fp16          # overflows: exit 1',
    'npm ci && npm run demo  # needs torch',
    "FOO=bar node dist/cli.js check 'a file.py'",
  );
  const { commands, problems } = extractCommands(markdown, 'x.md');
  assert.deepEqual(problems, []);
  assert.deepEqual(commands.map((c) => [c.text, c.expectedExit, c.needs]), [
    ['node dist/cli.js verify --ranks 512 --dtype fp16', 1, ['shared']],
    ['npm ci', 0, ['shared', 'torch']],
    ['npm run demo', 0, ['shared', 'torch']],
    ['FOO=bar node dist/cli.js check a file.py', 0, ['shared']],
  ]);
  assert.deepEqual(commands[3].env, { FOO: 'bar' });
  assert.deepEqual(commands[3].argv, ['node', 'dist/cli.js', 'check', 'a file.py']);
  assert.equal(extractCommands(fence('sh', 'node dist/cli.js check x  # exit code 2'), 'x.md').commands[0].expectedExit, 2);
  assert.equal(extractCommands(fence('sh', 'node dist/cli.js check x  # --exit-zero always exits 0'), 'x.md').commands[0].expectedExit, 0);
});

test('placeholders, pipes, redirections and substitutions are problems, not commands', () => {
  const cases = [
    'node dist/cli.js validate [--calibration-dir DIR]',
    'node dist/cli.js validate --calibration-dir DIR',
    'node dist/cli.js import <file>',
    'node dist/cli.js sweep --system dgx-h100 | head',
    'node dist/cli.js sweep --system dgx-h100 > out.txt',
    'node dist/cli.js check $HOME/train.py',
    'node dist/cli.js check "$(pwd)"',
    'node dist/cli.js check ...',
    "node dist/cli.js check 'unterminated",
  ];
  for (const line of cases) {
    const { commands, problems } = extractCommands(fence('sh', line), 'x.md');
    assert.equal(commands.length, 0, line);
    assert.equal(problems.length, 1, line);
    assert.match(problems[0], /^x\.md:4: /);
  }
  assert.deepEqual(extractCommands('```sh\nnpm test\n', 'x.md').problems, ['x.md: a code fence is never closed']);
});

test('a # inside a word is not a comment, and values such as LL or CP001 are not placeholders', () => {
  assert.deepEqual(splitWords('open docs/native.md#calibrating # see').words, [['open', 'docs/native.md#calibrating']]);
  const { commands, problems } = extractCommands(fence('sh', 'node dist/cli.js sweep --proto LL --algo ring && node dist/cli.js check x --rule CP001'), 'x.md');
  assert.deepEqual(problems, []);
  assert.equal(commands.length, 2);
  assert.equal(cliArguments({ ...commands[0], argv: ['npm', 'test'] }), undefined);
});
