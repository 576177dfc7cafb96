// Layer lists for the transformer families Hugging Face configs describe. Tensors are listed in the order the
// forward pass uses them, which is the order DDP settles its buckets into after the first iteration (it rebuilds
// them in gradient-ready order). Matmul weights cost 2 FLOPs per parameter per token; norms, biases and embedding
// lookups are free; attention's score and value matmuls cost 4 × width FLOPs per token per token of context.
import type { LayerSpec, ModelSpec, ParamTensor } from '../engine/index';

const matmul = (name: string, inputs: number, outputs: number, bias: boolean): ParamTensor => ({
  name,
  params: inputs * outputs + (bias ? outputs : 0),
  forwardFlopsPerToken: 2 * inputs * outputs,
});
const plain = (name: string, params: number): ParamTensor => ({ name, params, forwardFlopsPerToken: 0 });
const attentionCore = (width: number): ParamTensor => ({
  name: 'attention scores',
  params: 0,
  forwardFlopsPerToken: 0,
  forwardFlopsPerTokenPerSequenceToken: 4 * width,
});
/** A head that reuses the embedding matrix: it costs FLOPs but owns no parameters of its own. */
const tiedHead = (hidden: number, vocab: number): ParamTensor => ({
  name: 'lm_head (tied to the embedding)',
  params: 0,
  forwardFlopsPerToken: 2 * hidden * vocab,
});

export interface Gpt2Dims {
  vocab: number;
  positions: number;
  hidden: number;
  layers: number;
  inner: number;
}

export function gpt2Model(name: string, d: Gpt2Dims): ModelSpec {
  const layers: LayerSpec[] = [
    { name: 'embeddings', tensors: [plain('wte', d.vocab * d.hidden), plain('wpe', d.positions * d.hidden)] },
  ];
  for (let i = 0; i < d.layers; i++) {
    layers.push({
      name: `h.${i}`,
      tensors: [
        plain('ln_1', 2 * d.hidden),
        matmul('attn.c_attn', d.hidden, 3 * d.hidden, true),
        attentionCore(d.hidden),
        matmul('attn.c_proj', d.hidden, d.hidden, true),
        plain('ln_2', 2 * d.hidden),
        matmul('mlp.c_fc', d.hidden, d.inner, true),
        matmul('mlp.c_proj', d.inner, d.hidden, true),
      ],
    });
  }
  layers.push({ name: 'head', tensors: [plain('ln_f', 2 * d.hidden), tiedHead(d.hidden, d.vocab)] });
  return { name, family: 'gpt2', layers, maxSequenceLength: d.positions };
}

export interface BertDims {
  vocab: number;
  positions: number;
  typeVocab: number;
  hidden: number;
  layers: number;
  intermediate: number;
  mlmHead: boolean;
}

export function bertModel(name: string, d: BertDims): ModelSpec {
  const h = d.hidden;
  const layers: LayerSpec[] = [
    {
      name: 'embeddings',
      tensors: [
        plain('word_embeddings', d.vocab * h),
        plain('position_embeddings', d.positions * h),
        plain('token_type_embeddings', d.typeVocab * h),
        plain('LayerNorm', 2 * h),
      ],
    },
  ];
  for (let i = 0; i < d.layers; i++) {
    layers.push({
      name: `encoder.layer.${i}`,
      tensors: [
        matmul('attention.self.query', h, h, true),
        matmul('attention.self.key', h, h, true),
        matmul('attention.self.value', h, h, true),
        attentionCore(h),
        matmul('attention.output.dense', h, h, true),
        plain('attention.output.LayerNorm', 2 * h),
        matmul('intermediate.dense', h, d.intermediate, true),
        matmul('output.dense', d.intermediate, h, true),
        plain('output.LayerNorm', 2 * h),
      ],
    });
  }
  // The pooler runs on the [CLS] token only, so its FLOPs per token are negligible.
  layers.push({ name: 'pooler', tensors: [plain('pooler.dense', h * h + h)] });
  if (d.mlmHead) {
    layers.push({
      name: 'cls.predictions',
      tensors: [
        matmul('transform.dense', h, h, true),
        plain('transform.LayerNorm', 2 * h),
        { ...tiedHead(h, d.vocab), params: d.vocab, name: 'decoder (tied weight, own bias)' },
      ],
    });
  }
  return { name, family: 'bert', layers, maxSequenceLength: d.positions };
}

export interface DecoderDims {
  family: 'llama' | 'mistral' | 'mixtral' | 'qwen2';
  vocab: number;
  hidden: number;
  layers: number;
  intermediate: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  tieEmbeddings: boolean;
  attentionBias: boolean;
  mlpBias: boolean;
  maxPositions?: number;
  /** Mixture of experts: experts per layer and experts each token visits. */
  experts?: number;
  expertsPerToken?: number;
}

/** Llama-style decoders: RMSNorm (no bias), grouped-query attention, a gated SiLU MLP, optional experts. */
export function decoderModel(name: string, d: DecoderDims): ModelSpec {
  const h = d.hidden;
  const q = d.heads * d.headDim;
  const kv = d.kvHeads * d.headDim;
  const layers: LayerSpec[] = [{ name: 'embed_tokens', tensors: [plain('embed_tokens', d.vocab * h)] }];
  for (let i = 0; i < d.layers; i++) {
    const tensors: ParamTensor[] = [
      plain('input_layernorm', h),
      matmul('self_attn.q_proj', h, q, d.attentionBias),
      matmul('self_attn.k_proj', h, kv, d.attentionBias),
      matmul('self_attn.v_proj', h, kv, d.attentionBias),
      attentionCore(q),
      matmul('self_attn.o_proj', q, h, false),
      plain('post_attention_layernorm', h),
    ];
    if (d.experts && d.experts > 1) {
      const share = (d.expertsPerToken ?? 2) / d.experts;
      tensors.push(matmul('block_sparse_moe.gate', h, d.experts, false));
      for (let e = 0; e < d.experts; e++) {
        // Every expert holds parameters, but a token only pays for the experts its router picks.
        for (const [part, inputs, outputs] of [
          ['w1', h, d.intermediate],
          ['w3', h, d.intermediate],
          ['w2', d.intermediate, h],
        ] as const) {
          const t = matmul(`block_sparse_moe.experts.${e}.${part}`, inputs, outputs, false);
          tensors.push({ ...t, forwardFlopsPerToken: t.forwardFlopsPerToken * share });
        }
      }
    } else {
      tensors.push(
        matmul('mlp.gate_proj', h, d.intermediate, d.mlpBias),
        matmul('mlp.up_proj', h, d.intermediate, d.mlpBias),
        matmul('mlp.down_proj', d.intermediate, h, d.mlpBias),
      );
    }
    layers.push({ name: `layers.${i}`, tensors });
  }
  const head = d.tieEmbeddings ? tiedHead(h, d.vocab) : matmul('lm_head', h, d.vocab, false);
  layers.push({ name: 'head', tensors: [plain('norm', h), head] });
  return { name, family: d.family, layers, maxSequenceLength: d.maxPositions };
}

/** A model known only by its size: `layers` equal blocks of 12·h² parameters plus embeddings, for quick what-ifs. */
export function genericModel(
  name: string,
  parameters: number,
  layerCount: number,
  hidden: number,
  vocab: number,
): ModelSpec {
  const embedding = vocab * hidden;
  const perLayer = Math.max(0, (parameters - 2 * embedding) / layerCount);
  const layers: LayerSpec[] = [{ name: 'embeddings', tensors: [plain('embeddings', embedding)] }];
  for (let i = 0; i < layerCount; i++) {
    // Split a block as a transformer does: a third in attention, two thirds in the MLP.
    layers.push({
      name: `layers.${i}`,
      tensors: [
        { name: 'attention', params: perLayer / 3, forwardFlopsPerToken: (2 * perLayer) / 3 },
        attentionCore(hidden),
        { name: 'mlp', params: (2 * perLayer) / 3, forwardFlopsPerToken: (4 * perLayer) / 3 },
      ],
    });
  }
  layers.push({ name: 'head', tensors: [matmul('lm_head', hidden, vocab, false)] });
  return { name, family: 'generic', layers };
}
