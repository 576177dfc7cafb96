// Reads the generated HTML of every panel and checks its Content-Security-Policy: nothing by default, scripts only
// by nonce, no eval, and no source other than the webview's own resource origin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPanelHtml, makeNonce, panelCsp } from '../../src/extension/panels/html';
import { PANEL_KINDS } from '../../src/protocol';
import { englishL10n } from '../../src/extension/glue/l10n';
import { webviewStrings } from '../../src/extension/glue/webview-strings';

const CSP_SOURCE = 'https://*.vscode-cdn.net';

function cspOf(html: string): Map<string, string[]> {
  const metas = [...html.matchAll(/<meta http-equiv="Content-Security-Policy" content="([^"]*)">/g)];
  assert.equal(metas.length, 1, 'exactly one CSP meta tag');
  const directives = new Map<string, string[]>();
  for (const part of metas[0][1]
    .split(';')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, ...sources] = part.split(/\s+/);
    assert.ok(!directives.has(name), `directive ${name} appears once`);
    directives.set(name, sources);
  }
  return directives;
}

for (const panel of PANEL_KINDS) {
  test(`the ${panel} panel's CSP allows only nonce'd scripts and the webview origin`, () => {
    const nonce = makeNonce();
    const html = buildPanelHtml({
      panel,
      cspSource: CSP_SOURCE,
      scriptUri: `${'https://file+.vscode-resource.vscode-cdn.net'}/ext/dist/webview/${panel}.js`,
      nonce,
      title: `${panel} <b>`,
      codiconsUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/dist/codicon.css',
      strings: { ...webviewStrings(englishL10n), 'Reset zoom': '</script><script>alert(1)</script>' },
    });
    const csp = cspOf(html);
    assert.deepEqual(csp.get('default-src'), ["'none'"]);
    assert.deepEqual(csp.get('script-src'), [`'nonce-${nonce}'`]);
    for (const [name, sources] of csp) {
      for (const source of sources) {
        assert.ok(!/unsafe-(eval|inline|hashes)|wasm-unsafe-eval/.test(source), `${name} has ${source}`);
        assert.ok(
          source !== '*' && source !== 'https:' && source !== 'http:' && source !== 'blob:',
          `${name} allows ${source}`,
        );
        if (/^https?:/.test(source)) assert.equal(source, CSP_SOURCE, `${name} names a remote source ${source}`);
        assert.ok(
          [CSP_SOURCE, "'none'", `'nonce-${nonce}'`, 'data:'].includes(source),
          `${name} has unexpected source ${source}`,
        );
      }
    }
    assert.deepEqual(csp.get('img-src'), [CSP_SOURCE, 'data:']);
    assert.ok(
      !csp.has('connect-src') && !csp.has('frame-src') && !csp.has('worker-src'),
      'no network, frames or workers',
    );
    // Every script and style element carries the nonce; there are no inline handlers or javascript: URLs.
    // One script runs (the bundle); the other is the labels' JSON, a data block the browser never executes.
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    assert.equal(scripts.length, 2);
    assert.equal(scripts.filter((s) => /type="module"/.test(s)).length, 1);
    assert.equal(scripts.filter((s) => /type="application\/json"/.test(s)).length, 1);
    // A translation cannot close the data block: its `<` is escaped, so the page has exactly two closing tags.
    assert.equal(html.match(/<\/script>/g)?.length, 2);
    for (const tag of [...scripts, ...[...html.matchAll(/<style\b[^>]*>/g)].map((m) => m[0])])
      assert.match(tag, new RegExp(`nonce="${nonce.replace(/[+/]/g, '\\$&')}"`));
    assert.doesNotMatch(html, /\son[a-z]+=|javascript:/i);
    assert.match(html, new RegExp(`src="[^"]*/dist/webview/${panel}\\.js"`));
    assert.ok(html.includes('<title>' + panel + ' &lt;b&gt;</title>'), 'the title is escaped');
  });
}

test('nonces are fresh, and inputs that could widen the policy are refused', () => {
  assert.notEqual(makeNonce(), makeNonce());
  assert.match(makeNonce(), /^[A-Za-z0-9+/]{22}==$/);
  const base = {
    panel: 'timeline' as const,
    cspSource: CSP_SOURCE,
    scriptUri: 'https://x/a.js',
    nonce: makeNonce(),
    title: 't',
    strings: webviewStrings(englishL10n),
  };
  assert.throws(() => buildPanelHtml({ ...base, nonce: 'short' }), /nonce/);
  assert.throws(
    () => buildPanelHtml({ ...base, cspSource: "https://a; script-src 'unsafe-eval'" }),
    /invalid CSP source/,
  );
  assert.throws(() => buildPanelHtml({ ...base, cspSource: "https://a 'unsafe-inline'" }), /invalid CSP source/);
  assert.throws(() => buildPanelHtml({ ...base, cspSource: 'https://a,https://b' }), /invalid CSP source/);
  // code-server's webview.cspSource is two source expressions; it must be accepted as VS Code gives it.
  assert.match(
    buildPanelHtml({ ...base, cspSource: "'self' https://*.vscode-cdn.net" }),
    /img-src 'self' https:\/\/\*\.vscode-cdn\.net data:/,
  );
  assert.throws(
    () => buildPanelHtml({ ...base, scriptUri: 'https://x/a.js" onload="alert(1)' }),
    /invalid resource URI/,
  );
  assert.equal(panelCsp(CSP_SOURCE, 'n').includes('unsafe'), false);
});

test("the page's lang is VS Code's display language, and markup in it falls back to English", () => {
  const base = {
    panel: 'charts' as const,
    cspSource: CSP_SOURCE,
    scriptUri: 'https://x/a.js',
    nonce: makeNonce(),
    title: 't',
    strings: webviewStrings(englishL10n),
  };
  assert.match(buildPanelHtml({ ...base, language: 'zh-cn' }), /<html lang="zh-cn">/);
  assert.match(buildPanelHtml(base), /<html lang="en">/);
  assert.match(buildPanelHtml({ ...base, language: 'de"><script>' }), /<html lang="en">/);
});
