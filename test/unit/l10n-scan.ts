// Finds user-facing string literals outside a translation call (`t(…)` in the panels, `l10n.t(…)` in the glue and
// the host) by walking a file's syntax tree: a literal where the user reads it (an element's text, a title,
// aria-label, placeholder or chart label, a message's text, a textContent, a label/value pair), or any prose (two
// words or more) outside the log and the translation calls themselves. Errors are silent in the panels (they go to
// the log); in the extension host they are text, because the command wrapper shows every error's message in a
// notification (src/extension/commands.ts, reportError).
import ts from 'typescript';

/** Object keys and attributes whose value the user reads. */
const TEXT_KEYS = new Set([
  'title',
  'text',
  'label',
  'aria-label',
  'placeholder',
  'alt',
  'verdict',
  'tooltip',
  // What a message or a problem tells the user: `{ type: 'error', message }` posted to a panel, a diagnostic's text.
  'message',
]);
/** Properties whose assignment puts text on screen. */
const TEXT_TARGETS = new Set(['textContent', 'innerText', 'title', 'placeholder', 'ariaLabel', 'label']);
/** Keys and targets whose values are markup, styling or identifiers, never text. */
const NOT_TEXT = new Set([
  'class',
  'className',
  'font',
  'fontFamily',
  'fillStyle',
  'strokeStyle',
  'textBaseline',
  'textAlign',
  'preserveAspectRatio',
  'd',
  'viewBox',
  'orient',
  'type',
  'id',
  'role',
  'icon',
  'value',
  'key',
  'panel',
]);
/** Calls whose string arguments never reach the screen: the extension's log, the console, identifiers. */
const SILENT_CALLS = new Set([
  'log',
  'error',
  'warn',
  'info',
  'debug',
  'trace',
  't',
  'getElementById',
  'querySelector',
  'querySelectorAll',
  'createElement',
  'createElementNS',
  'addEventListener',
  'removeEventListener',
  'getContext',
  'getPropertyValue',
  'setProperty',
  'themeVar',
  'resolveColor',
  'indexOf',
  'includes',
  'split',
  'join',
  'replace',
  'startsWith',
  'endsWith',
  'has',
  'get',
  'set',
  'toLocaleString',
]);

/** The static text of a literal: a string, or a template's parts without their substitutions. */
function staticText(node: ts.Node): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node))
    return [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' ');
  return undefined;
}

/** Words a reader reads: two of two letters or more, or a sentence's ellipsis. */
const PROSE = /[A-Za-z]{2,}[^A-Za-z\n]*\s[^A-Za-z\n]*[A-Za-z]{2,}|[A-Za-z]{2,}…/;
const LETTERS = /[A-Za-z]{2,}/;

function calleeName(call: ts.CallExpression | ts.NewExpression): string {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return '';
}

function nameOf(name: ts.PropertyName | ts.Expression): string {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isPrivateIdentifier(name)) return name.text;
  return '';
}

/** How a scan treats what is not obviously text or silent. */
export interface ScanOptions {
  /**
   * Whether an error's message reaches the user: true in the extension host, where the command wrapper shows it in
   * a notification; false in the panels, whose errors go to the log.
   */
  readonly errorsAreText?: boolean;
}

/**
 * Where a literal sits, walking up through the expressions that pass it on unchanged (conditionals, parentheses,
 * `??`/`||`, a template's substitutions): 'text' where it is shown, 'silent' where it cannot be, 'neutral'
 * otherwise.
 */
function placement(node: ts.Node, options: ScanOptions): 'text' | 'silent' | 'neutral' {
  let child: ts.Node = node;
  let parent = node.parent;
  while (
    ts.isConditionalExpression(parent) ||
    ts.isParenthesizedExpression(parent) ||
    ts.isAsExpression(parent) ||
    ts.isTemplateSpan(parent) ||
    ts.isTemplateExpression(parent) ||
    (ts.isBinaryExpression(parent) &&
      [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken].includes(parent.operatorToken.kind))
  ) {
    if (ts.isConditionalExpression(parent) && parent.condition === child) break;
    child = parent;
    parent = parent.parent;
  }
  if (ts.isImportDeclaration(parent) || ts.isExportDeclaration(parent) || ts.isLiteralTypeNode(parent)) return 'silent';
  if (ts.isCaseClause(parent) || ts.isElementAccessExpression(parent)) return 'silent';
  if (ts.isThrowStatement(parent)) return options.errorsAreText ? 'text' : 'silent';
  if (ts.isBinaryExpression(parent)) {
    const op = parent.operatorToken.kind;
    if (op === ts.SyntaxKind.EqualsToken && parent.right === child && !ts.isPropertyAccessExpression(parent.left))
      return 'neutral';
    if (op === ts.SyntaxKind.EqualsToken && parent.right === child && ts.isPropertyAccessExpression(parent.left)) {
      const target = parent.left.name.text;
      if (NOT_TEXT.has(target)) return 'silent';
      return TEXT_TARGETS.has(target) ? 'text' : 'neutral';
    }
    if (op !== ts.SyntaxKind.PlusToken) return 'silent';
  }
  if (ts.isPropertyAssignment(parent) && parent.initializer === child) {
    const key = nameOf(parent.name);
    if (NOT_TEXT.has(key) || key.startsWith('data-') || key.startsWith('stroke') || key.startsWith('font'))
      return 'silent';
    return TEXT_KEYS.has(key) ? 'text' : 'neutral';
  }
  if (ts.isPropertyAssignment(parent) && parent.name === child) return 'silent';
  if (ts.isCallExpression(parent) || ts.isNewExpression(parent)) {
    const name = calleeName(parent);
    if (ts.isNewExpression(parent) && /Error$/.test(name)) {
      // An error's first argument is its message; the others are positions and file names.
      const first = parent.arguments?.[0] === child;
      return options.errorsAreText && first ? 'text' : 'silent';
    }
    // A translation's template is the translator's; an argument filled into it is not, and English prose there
    // reaches the user untranslated.
    if (name === 't' && ts.isCallExpression(parent) && parent.arguments.indexOf(child as ts.Expression) > 0)
      return 'neutral';
    if (SILENT_CALLS.has(name) || name === 'el' || name === 'svg') {
      // An element's children (after the tag and the attributes) are its text.
      const index = parent.arguments?.indexOf(child as ts.Expression) ?? -1;
      if ((name === 'el' || name === 'svg') && index >= 2) return 'text';
      return 'silent';
    }
    if (name === 'fillText' || name === 'append' || name === 'showMessage') return 'text';
  }
  // A [label, value] pair, as the details pane lists them (two literals are a list of names, e.g. CSS variables).
  if (
    ts.isArrayLiteralExpression(parent) &&
    parent.elements.length === 2 &&
    parent.elements[0] === child &&
    !ts.isStringLiteral(parent.elements[1]) &&
    !ts.isNoSubstitutionTemplateLiteral(parent.elements[1])
  )
    return 'text';
  return 'neutral';
}

/** `file:line: text` for every user-facing literal of one source file outside `t(…)`. */
export function untranslated(file: string, source: string, options: ScanOptions = {}): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const problems: string[] = [];
  const visit = (node: ts.Node): void => {
    const text = staticText(node);
    if (text !== undefined) {
      const where = placement(node, options);
      const shown = where === 'text' ? LETTERS.test(text) : where === 'neutral' && PROSE.test(text);
      if (shown) {
        const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
        problems.push(`${file}:${line}: ${node.getText(sf).slice(0, 80)}`);
      }
      if (ts.isTemplateExpression(node)) node.templateSpans.forEach((s) => visit(s.expression));
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return problems;
}
