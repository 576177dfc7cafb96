// Creates the one tree-sitter parser for Python that a process uses (the CLI and the extension both load it once
// and pass it to every analyzePython call). The object given to Parser.init is kept: emscripten fills it with the
// runtime's exports, which tree.ts uses to copy trees without TreeCursor's per-call marshalling.
import { Language, Parser } from 'web-tree-sitter';
import { useTreeSitterModule } from './tree';

/** `runtimeWasm` and `grammarWasm` are paths (Node) or URLs of tree-sitter.wasm and tree-sitter-python.wasm. */
export async function createPythonParser(runtimeWasm: string, grammarWasm: string): Promise<Parser> {
  const module = { locateFile: () => runtimeWasm };
  await Parser.init(module);
  useTreeSitterModule(module);
  const language = await Language.load(grammarWasm);
  const parser = new Parser();
  parser.setLanguage(language);
  return parser;
}
