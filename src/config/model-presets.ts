// Built-in model presets: the dimensions from each model's published Hugging Face config.json (the full files
// are in examples/models/, and a test checks that both give the same model).
import type { ModelSpec } from '../engine/index';
import { parseHfModelConfig } from './hf-model';

const PRESET_CONFIGS: Readonly<Record<string, object>> = {
  gpt2: {
    architectures: ['GPT2LMHeadModel'],
    model_type: 'gpt2',
    n_embd: 768,
    n_head: 12,
    n_layer: 12,
    n_positions: 1024,
    vocab_size: 50257,
  },
  'bert-base-uncased': {
    architectures: ['BertForMaskedLM'],
    model_type: 'bert',
    hidden_size: 768,
    intermediate_size: 3072,
    max_position_embeddings: 512,
    num_hidden_layers: 12,
    type_vocab_size: 2,
    vocab_size: 30522,
  },
  'llama-2-7b': {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    hidden_size: 4096,
    intermediate_size: 11008,
    max_position_embeddings: 4096,
    num_attention_heads: 32,
    num_hidden_layers: 32,
    num_key_value_heads: 32,
    tie_word_embeddings: false,
    vocab_size: 32000,
  },
  'llama-2-70b': {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    hidden_size: 8192,
    intermediate_size: 28672,
    max_position_embeddings: 4096,
    num_attention_heads: 64,
    num_hidden_layers: 80,
    num_key_value_heads: 8,
    tie_word_embeddings: false,
    vocab_size: 32000,
  },
  'llama-3-8b': {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    hidden_size: 4096,
    intermediate_size: 14336,
    max_position_embeddings: 8192,
    num_attention_heads: 32,
    num_hidden_layers: 32,
    num_key_value_heads: 8,
    tie_word_embeddings: false,
    vocab_size: 128256,
  },
  'mistral-7b': {
    architectures: ['MistralForCausalLM'],
    model_type: 'mistral',
    hidden_size: 4096,
    intermediate_size: 14336,
    max_position_embeddings: 32768,
    num_attention_heads: 32,
    num_hidden_layers: 32,
    num_key_value_heads: 8,
    tie_word_embeddings: false,
    vocab_size: 32000,
  },
  'mixtral-8x7b': {
    architectures: ['MixtralForCausalLM'],
    model_type: 'mixtral',
    hidden_size: 4096,
    intermediate_size: 14336,
    max_position_embeddings: 32768,
    num_attention_heads: 32,
    num_hidden_layers: 32,
    num_key_value_heads: 8,
    num_local_experts: 8,
    num_experts_per_tok: 2,
    tie_word_embeddings: false,
    vocab_size: 32000,
  },
};

export const MODEL_PRESETS: readonly string[] = Object.keys(PRESET_CONFIGS);

/** The model for a preset name (case-insensitive, e.g. llama-2-7b), or undefined. */
export function modelPreset(name: string): ModelSpec | undefined {
  const key = MODEL_PRESETS.find((k) => k.toLowerCase() === name.trim().toLowerCase());
  if (!key) return undefined;
  const model = parseHfModelConfig(JSON.stringify(PRESET_CONFIGS[key]), `preset:${key}`);
  return { ...model, name: key };
}
