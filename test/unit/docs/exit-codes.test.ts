// Every exit code the CLI can end with is in docs/cli.md's table, and every code in the table is one it can end
// with. The codes are read from the syntax tree: what each command's `execute` returns (literals, conditionals of
// literals, a local holding one, a helper of the same file, `128 + signal`), and what src/cli/main.ts returns,
// exits with or sets. (The earlier check read main.ts only, and missed the 130 of an interrupted worker pool.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { runCli } from '../cli/run-cli';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const CLI = join(ROOT, 'src', 'cli');

/** The codes `docs/cli.md` lists under "Exit codes", as written in the table's first column. */
function documentedCodes(): Set<string> {
  const text = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
  const section = text.slice(text.indexOf('## Exit codes'), text.indexOf('\n## ', text.indexOf('## Exit codes') + 1));
  return new Set([...section.matchAll(/^\| (\d+(?: \+ n)?) \|/gm)].map((m) => m[1]));
}

function isFunctionLike(node: ts.Node): boolean {
  return ts.isFunctionDeclaration(node) || ts.isFunctionExpression(node) || ts.isArrowFunction(node);
}

/** The codes an expression can evaluate to; `unknown: …` where it is not read as one. */
function codesOf(expression: ts.Expression, body: ts.Node, constants: ReadonlyMap<string, string>): string[] {
  if (ts.isParenthesizedExpression(expression) || ts.isAwaitExpression(expression))
    return codesOf(expression.expression, body, constants);
  // main hands on what the command returned: the commands' own codes are read from their files.
  if (expression.getText() === 'command.run(args, io)') return [];
  // A helper of the same file that computes the code: its returns are the codes.
  if (ts.isCallExpression(expression) && ts.isIdentifier(expression.expression)) {
    const name = expression.expression.text;
    const helper = expression
      .getSourceFile()
      .statements.find((s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === name);
    if (helper?.body) return returns(helper.body).flatMap((e) => codesOf(e, helper.body!, constants));
  }
  if (ts.isNumericLiteral(expression)) return [expression.text];
  if (ts.isConditionalExpression(expression))
    return [...codesOf(expression.whenTrue, body, constants), ...codesOf(expression.whenFalse, body, constants)];
  if (
    ts.isBinaryExpression(expression) &&
    expression.operatorToken.kind === ts.SyntaxKind.PlusToken &&
    ts.isNumericLiteral(expression.left) &&
    expression.left.text === '128'
  )
    return ['128 + n'];
  if (ts.isIdentifier(expression)) {
    const constant = constants.get(expression.text);
    if (constant) return [constant];
    let initializer: ts.Expression | undefined;
    const find = (node: ts.Node): void => {
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === expression.text)
        initializer = node.initializer;
      ts.forEachChild(node, find);
    };
    find(body);
    if (initializer) return codesOf(initializer, body, constants);
  }
  return [`unknown: ${expression.getText()}`];
}

/** Every `return` of a function body, not of the functions nested in it. */
function returns(body: ts.Node): ts.Expression[] {
  const found: ts.Expression[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isReturnStatement(node) && node.expression) found.push(node.expression);
    if (!isFunctionLike(node)) ts.forEachChild(node, visit);
  };
  ts.forEachChild(body, visit);
  return found;
}

/** The codes one file's `execute` (a command) or `main` and its exits (main.ts) can end with. */
function fileCodes(path: string): string[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const constants = new Map<string, string>();
  const codes: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && /^EXIT_/.test(node.name.text))
      if (node.initializer && ts.isNumericLiteral(node.initializer)) constants.set(node.name.text, node.initializer.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  const collect = (node: ts.Node): void => {
    if ((ts.isMethodDeclaration(node) || ts.isFunctionDeclaration(node)) && node.body) {
      const name = node.name?.getText();
      const body = node.body;
      if (name === 'execute' || name === 'main')
        for (const expression of returns(body)) codes.push(...codesOf(expression, body, constants));
    }
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken)
      if (node.left.getText() === 'process.exitCode') codes.push(...codesOf(node.right, source, constants));
    if (ts.isCallExpression(node) && node.expression.getText() === 'process.exit' && node.arguments[0])
      codes.push(...codesOf(node.arguments[0], source, constants));
    ts.forEachChild(node, collect);
  };
  collect(source);
  // `process.exitCode = code` hands on what main returned, already counted.
  return codes.filter((c) => c !== 'unknown: code' || !path.endsWith('main.ts'));
}

test("every exit code the CLI can end with is in docs/cli.md's table, the table lists no other, and --help names each", async () => {
  const files = [
    join(CLI, 'main.ts'),
    ...readdirSync(join(CLI, 'commands'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => join(CLI, 'commands', f)),
  ];
  const code = new Set(files.flatMap(fileCodes));
  assert.deepEqual(
    [...code].filter((c) => c.startsWith('unknown')),
    [],
    'every return of a command is read as a code',
  );
  assert.deepEqual([...code].sort(), [...documentedCodes()].sort());
  const help = await runCli(['--help']);
  for (const documented of documentedCodes())
    assert.match(help.stdout, new RegExp(`\\b${documented.replace('+', '\\+')}\\b`), `--help names ${documented}`);
});

test('the reader finds literal, conditional, local, signal and constant exit codes', () => {
  const body = [
    'export const EXIT_CLOSED_PIPE = 141;',
    'function main() { if (a) return 2; const code = b ? 1 : 0; return code; }',
    'const c = { async execute() { const f = () => { return 99; }; if (s) return 128 + signal; return 130; } };',
    'process.exit(EXIT_CLOSED_PIPE);',
  ].join('\n');
  const path = join(import.meta.dirname, 'exit-codes-sample.ts');
  const source = ts.createSourceFile(path, body, ts.ScriptTarget.Latest, true);
  const codes: string[] = [];
  const walk = (node: ts.Node): void => {
    if ((ts.isMethodDeclaration(node) || ts.isFunctionDeclaration(node)) && node.body)
      for (const expression of returns(node.body))
        codes.push(...codesOf(expression, node.body, new Map([['EXIT_CLOSED_PIPE', '141']])));
    if (ts.isCallExpression(node) && node.expression.getText() === 'process.exit')
      codes.push(...codesOf(node.arguments[0], source, new Map([['EXIT_CLOSED_PIPE', '141']])));
    ts.forEachChild(node, walk);
  };
  walk(source);
  assert.deepEqual(codes.sort(), ['0', '1', '128 + n', '130', '141', '2']);
});
