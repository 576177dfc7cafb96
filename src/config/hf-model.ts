// Reads a Hugging Face model `config.json` into a ModelSpec: which family it is (from model_type or
// architectures), then the dimensions that family's config names, checked with positioned errors.
import type { ModelSpec } from '../engine/index';
import { closestMatch } from './did-you-mean';
import { bertModel, decoderModel, gpt2Model, type DecoderDims } from './model-architectures';
import { ConfigError, issueAtPath, parseDocument, validateAgainstSchema, type PositionedDocument } from './positioned';

export type HfFamily = 'gpt2' | 'bert' | 'llama' | 'mistral' | 'mixtral' | 'qwen2';
export const HF_FAMILIES: readonly HfFamily[] = ['gpt2', 'bert', 'llama', 'mistral', 'mixtral', 'qwen2'];

/** Architecture class prefixes, e.g. LlamaForCausalLM → llama. Longer prefixes first so Mixtral beats Mistral. */
const ARCHITECTURE_PREFIXES: readonly [string, HfFamily][] = [
  ['GPT2', 'gpt2'],
  ['Bert', 'bert'],
  ['Mixtral', 'mixtral'],
  ['Mistral', 'mistral'],
  ['Llama', 'llama'],
  ['Qwen2', 'qwen2'],
];

const positiveInt = (description: string): object => ({ type: 'integer', minimum: 1, description });
const flag = { type: 'boolean' };
const nullableInt = { type: ['integer', 'null'], minimum: 1 };

const DECODER_PROPERTIES = {
  vocab_size: positiveInt('vocabulary size'),
  hidden_size: positiveInt('model width'),
  intermediate_size: positiveInt('MLP width'),
  num_hidden_layers: positiveInt('transformer blocks'),
  num_attention_heads: positiveInt('query heads'),
  num_key_value_heads: nullableInt,
  head_dim: nullableInt,
  max_position_embeddings: positiveInt('longest context'),
  tie_word_embeddings: flag,
  attention_bias: flag,
  mlp_bias: flag,
  num_local_experts: positiveInt('experts per layer'),
  num_experts_per_tok: positiveInt('experts each token visits'),
  architectures: { type: 'array', items: { type: 'string' } },
  model_type: { type: 'string' },
};
const DECODER_REQUIRED = ['vocab_size', 'hidden_size', 'intermediate_size', 'num_hidden_layers', 'num_attention_heads'];

const SCHEMAS: Record<HfFamily, object> = {
  gpt2: {
    type: 'object',
    required: ['vocab_size', 'n_embd', 'n_layer'],
    properties: {
      vocab_size: positiveInt('vocabulary size'),
      n_embd: positiveInt('model width'),
      n_layer: positiveInt('blocks'),
      n_head: positiveInt('heads'),
      n_positions: positiveInt('context'),
      n_ctx: positiveInt('context'),
      n_inner: nullableInt,
      architectures: { type: 'array', items: { type: 'string' } },
    },
  },
  bert: {
    type: 'object',
    required: ['vocab_size', 'hidden_size', 'num_hidden_layers', 'intermediate_size'],
    properties: {
      vocab_size: positiveInt('vocabulary size'),
      hidden_size: positiveInt('width'),
      num_hidden_layers: positiveInt('layers'),
      intermediate_size: positiveInt('MLP width'),
      max_position_embeddings: positiveInt('context'),
      type_vocab_size: positiveInt('segment types'),
      architectures: { type: 'array', items: { type: 'string' } },
    },
  },
  llama: { type: 'object', required: DECODER_REQUIRED, properties: DECODER_PROPERTIES },
  mistral: { type: 'object', required: DECODER_REQUIRED, properties: DECODER_PROPERTIES },
  mixtral: { type: 'object', required: DECODER_REQUIRED, properties: DECODER_PROPERTIES },
  qwen2: { type: 'object', required: DECODER_REQUIRED, properties: DECODER_PROPERTIES },
};

/** True when a parsed JSON object looks like a Hugging Face model config rather than a training config. */
export function looksLikeHfModelConfig(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    ('model_type' in value || 'architectures' in value)
  );
}

function detectFamily(doc: PositionedDocument, config: Record<string, unknown>): HfFamily {
  const modelType = typeof config.model_type === 'string' ? config.model_type.toLowerCase() : undefined;
  if (modelType && (HF_FAMILIES as readonly string[]).includes(modelType)) return modelType as HfFamily;
  const architectures = Array.isArray(config.architectures)
    ? config.architectures.filter((a): a is string => typeof a === 'string')
    : [];
  for (const architecture of architectures) {
    const match = ARCHITECTURE_PREFIXES.find(([prefix]) => architecture.startsWith(prefix));
    if (match) return match[1];
  }
  const named = [
    modelType && `model_type '${modelType}'`,
    architectures.length > 0 && `architectures ${architectures.join(', ')}`,
  ]
    .filter(Boolean)
    .join(' and ');
  const suggestion = modelType ? closestMatch(modelType, HF_FAMILIES) : undefined;
  const hint = suggestion ? ` (did you mean '${suggestion}'?)` : '';
  const message = `${named ? `unknown architecture: ${named}` : 'no model_type or architectures key: cannot tell which model this is'}${hint}; supported families: ${HF_FAMILIES.join(', ')}`;
  const path = modelType !== undefined ? ['model_type'] : architectures.length > 0 ? ['architectures'] : [];
  throw new ConfigError(doc.fileName, [issueAtPath(doc, path, message, { suggestion })]);
}

function modelName(config: Record<string, unknown>, family: HfFamily, fileName: string): string {
  const path = typeof config._name_or_path === 'string' && config._name_or_path ? config._name_or_path : undefined;
  const architecture =
    Array.isArray(config.architectures) && typeof config.architectures[0] === 'string'
      ? config.architectures[0]
      : family;
  return path ? `${path} (${architecture})` : `${fileName.split(/[\\/]/).slice(-2).join('/')} (${architecture})`;
}

/** Builds the model from an already parsed config document (used for files and for inline `model.hf` sections). */
export function modelFromHfDocument(doc: PositionedDocument): ModelSpec {
  const config = doc.value;
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new ConfigError(doc.fileName, [issueAtPath(doc, [], 'a model config.json must be a JSON object')]);
  }
  const c = config as Record<string, unknown>;
  const family = detectFamily(doc, c);
  const issues = validateAgainstSchema(doc, SCHEMAS[family]);
  if (issues.length > 0) throw new ConfigError(doc.fileName, issues);
  const name = modelName(c, family, doc.fileName);
  const num = (key: string, fallback: number): number => (typeof c[key] === 'number' ? (c[key] as number) : fallback);
  const bool = (key: string, fallback: boolean): boolean =>
    typeof c[key] === 'boolean' ? (c[key] as boolean) : fallback;
  if (family === 'gpt2') {
    const hidden = num('n_embd', 768);
    return gpt2Model(name, {
      vocab: num('vocab_size', 50257),
      positions: num('n_positions', num('n_ctx', 1024)),
      hidden,
      layers: num('n_layer', 12),
      inner: num('n_inner', 4 * hidden),
    });
  }
  if (family === 'bert') {
    const architectures = Array.isArray(c.architectures) ? c.architectures.map(String) : [];
    const mlmHead = architectures.some((a) => /MaskedLM|PreTraining/.test(a));
    return bertModel(name, {
      vocab: num('vocab_size', 30522),
      positions: num('max_position_embeddings', 512),
      typeVocab: num('type_vocab_size', 2),
      hidden: num('hidden_size', 768),
      layers: num('num_hidden_layers', 12),
      intermediate: num('intermediate_size', 3072),
      mlmHead,
    });
  }
  const hidden = num('hidden_size', 4096);
  const heads = num('num_attention_heads', 32);
  if (hidden % heads !== 0 && typeof c.head_dim !== 'number') {
    throw new ConfigError(doc.fileName, [
      issueAtPath(
        doc,
        ['num_attention_heads'],
        `num_attention_heads: ${heads} does not divide hidden_size ${hidden}; set head_dim`,
      ),
    ]);
  }
  const dims: DecoderDims = {
    family,
    vocab: num('vocab_size', 32000),
    hidden,
    layers: num('num_hidden_layers', 32),
    intermediate: num('intermediate_size', 11008),
    heads,
    kvHeads: num('num_key_value_heads', heads),
    headDim: num('head_dim', hidden / heads),
    tieEmbeddings: bool('tie_word_embeddings', false),
    // Qwen2 puts biases on q, k and v; the others have none unless the config says so.
    attentionBias: bool('attention_bias', family === 'qwen2'),
    mlpBias: bool('mlp_bias', false),
    maxPositions: typeof c.max_position_embeddings === 'number' ? c.max_position_embeddings : undefined,
    experts: family === 'mixtral' ? num('num_local_experts', 8) : undefined,
    expertsPerToken: family === 'mixtral' ? num('num_experts_per_tok', 2) : undefined,
  };
  if (dims.heads % dims.kvHeads !== 0) {
    throw new ConfigError(doc.fileName, [
      issueAtPath(
        doc,
        ['num_key_value_heads'],
        `num_key_value_heads: ${dims.kvHeads} does not divide num_attention_heads ${dims.heads}`,
      ),
    ]);
  }
  return decoderModel(name, dims);
}

/** Parses a Hugging Face config.json. Throws ConfigError with a line and column for anything it cannot use. */
export function parseHfModelConfig(text: string, fileName: string): ModelSpec {
  return modelFromHfDocument(parseDocument(text, fileName));
}
