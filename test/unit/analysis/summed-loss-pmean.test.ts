// CP003, the gradient of a summed loss averaged over the devices: a loss function returns the sum of its examples'
// losses and their count, one call of its gradient function is summed over the devices with the count and divided
// by it (which proves the loss is a sum), and another call's gradient is `lax.pmean`-ed, which divides by the device
// count instead. The positives fail without the rule; the correct twins stay silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

const HEADER = py`
  import functools
  import jax
  from jax import lax
  import jax.numpy as jnp
  import optax


  def masked_loss_sum(params, batch):
      logits = batch["x"] @ params["w"]
      losses = optax.softmax_cross_entropy_with_integer_labels(logits, batch["y"])
      return jnp.sum(losses * batch["mask"]), jnp.sum(batch["mask"])
`;

// A step that takes a second gradient at a point ahead of the averaged first one; `update` applies what it chose.
function lookaheadStep(
  second: string,
  update = `updates, opt_state = tx.update(second, opt_state, params)
          return optax.apply_updates(params, updates), opt_state`,
): string {
  return (
    HEADER +
    py`


      @functools.partial(jax.pmap, axis_name="devices", static_broadcasted_argnums=(3,))
      def train_step(params, opt_state, batch, tx):
          grad_fn = jax.grad(masked_loss_sum, has_aux=True)
          grads, count = grad_fn(params, batch)
          grads, count = lax.psum((grads, count), "devices")
          grads = jax.tree_util.tree_map(lambda g: g / count, grads)
          ahead = jax.tree_util.tree_map(lambda p, g: p + 0.05 * g, params, grads)
          ${second}
          ${update}
    `
  );
}

test('CP003: the second gradient of a count-normalised summed loss is pmean-ed in the same step', async () => {
  const findings = await analyze(
    lookaheadStep(`second, _ = grad_fn(ahead, batch)
          second = lax.pmean(second, axis_name="devices")`),
  );
  assert.deepEqual(summary(findings), ['CP003@22']);
  assert.match(findings[0].message, /gradient of `masked_loss_sum`.*'devices'.*`count`/s);
  assert.doesNotMatch(findings[0].message, /\$\{|undefined/);
  assert.deepEqual(
    findings[0].related.map((r) => r.range.startLine + 1),
    [21, 16, 18, 19],
  );
});

test('CP003 summed-loss pmean is silent when the second gradient is also summed and divided by the count', async () => {
  const findings = await analyze(
    lookaheadStep(`second, n = grad_fn(ahead, batch)
          second, n = lax.psum((second, n), "devices")
          second = jax.tree_util.tree_map(lambda g: g / n, second)`),
  );
  assert.deepEqual(summary(findings), []);
});

test('CP003 summed-loss pmean is silent when the pmean runs over another axis or is rescaled after', async () => {
  const otherAxis = await analyze(
    lookaheadStep(`second, _ = grad_fn(ahead, batch)
          second = lax.pmean(second, axis_name="model")`),
  );
  assert.deepEqual(summary(otherAxis), []);
  const rescaled = await analyze(
    lookaheadStep(`second, n = grad_fn(ahead, batch)
          second = lax.pmean(second, axis_name="devices")
          second = jax.tree_util.tree_map(lambda g: g * jax.device_count() / lax.psum(n, "devices"), second)`),
  );
  assert.deepEqual(summary(rescaled), []);
});

test('CP003 summed-loss pmean is silent when the averaged gradient is only measured', async () => {
  const text = lookaheadStep(
    `second, _ = grad_fn(ahead, batch)
          second = lax.pmean(second, axis_name="devices")
          sharpness = optax.global_norm(second)`,
    `updates, opt_state = tx.update(grads, opt_state, params)
          return optax.apply_updates(params, updates), opt_state, sharpness`,
  );
  assert.deepEqual(summary(await analyze(text)), []);
});

test('CP003 summed-loss pmean is silent without a count normalisation in view (a mean loss, pmean-ed twice)', async () => {
  const text = py`
    import functools
    import jax
    from jax import lax
    import jax.numpy as jnp
    import optax


    def mean_loss(params, batch):
        logits = batch["x"] @ params["w"]
        losses = optax.softmax_cross_entropy_with_integer_labels(logits, batch["y"])
        return jnp.mean(losses), logits


    @functools.partial(jax.pmap, axis_name="devices", static_broadcasted_argnums=(3,))
    def train_step(params, opt_state, batch, tx):
        grad_fn = jax.grad(mean_loss, has_aux=True)
        grads, _ = grad_fn(params, batch)
        grads = lax.pmean(grads, "devices")
        ahead = jax.tree_util.tree_map(lambda p, g: p + 0.05 * g, params, grads)
        second, _ = grad_fn(ahead, batch)
        second = lax.pmean(second, axis_name="devices")
        updates, opt_state = tx.update(second, opt_state, params)
        return optax.apply_updates(params, updates), opt_state
  `;
  assert.deepEqual(summary(await analyze(text)), []);
});

// The gradient function travels to the pmean the way an optax transformation receives it: in a tuple given as the
// third argument of its `update`, called through the value `init_optimizer_state` returned, which the algoperf
// runner hands to `update_params` as `optimizer_state`.
function submission(importLine: string, reduce: string): string {
  return py`
    import functools
    import jax
    from jax import lax
    import optax
    ${importLine}


    def lookahead(radius, axis, inner_update):
        def init_fn(params):
            return None

        def update_fn(grads, state, fn_and_params):
            grad_fn, params = fn_and_params
            shifted = jax.tree_util.tree_map(lambda p, g: p + radius * g, params, grads)
            (_, _), grads = grad_fn(shifted)
            ${reduce}
            return inner_update(grads, state, params)

        return optax.GradientTransformation(init_fn, update_fn)


    def init_optimizer_state(workload, model_params, model_state, hyperparameters, rng):
        _, inner = optax.sgd(hyperparameters.learning_rate)
        init_fn, update_fn = lookahead(0.05, axis="replicas", inner_update=inner)
        return init_fn(model_params), update_fn


    @functools.partial(jax.pmap, axis_name="replicas", static_broadcasted_argnums=(0, 1))
    def step(workload, update_fn, opt_state, params, batch):
        def loss_of(p):
            out = workload.loss_fn(batch["y"], workload.model_fn(p, batch))
            return out["summed"], out["n_valid_examples"]

        value_grad = jax.value_and_grad(loss_of, has_aux=True)
        (loss, n_valid), grads = value_grad(params)
        (loss, n_valid, grads) = lax.psum((loss, n_valid, grads), axis_name="replicas")
        grads = jax.tree_util.tree_map(lambda g: g / n_valid, grads)
        updates, opt_state = update_fn(grads, opt_state, (value_grad, params))
        return optax.apply_updates(params, updates), opt_state


    def update_params(workload, current_param_container, current_params_types, model_state, hyperparameters,
                      batch, loss_type, optimizer_state, eval_results, global_step, rng):
        opt_state, update_fn = optimizer_state
        new_params, opt_state = step(workload, update_fn, opt_state, current_param_container, batch)
        return (opt_state, update_fn), new_params, model_state
  `;
}

test('CP003: the pmean in an optax update reached through a tuple argument and the algoperf submission API', async () => {
  const text = submission('from algorithmic_efficiency import spec', 'grads = jax.lax.pmean(grads, axis_name=axis)');
  const findings = await analyze(text);
  assert.deepEqual(summary(findings), ['CP003@16']);
  assert.match(findings[0].message, /gradient of `loss_of`.*'replicas'.*`n_valid`/s);
  // The related locations show the call that hands the gradient function to the update, in its tuple.
  assert.ok(findings[0].related.some((r) => /update_fn\(grads, opt_state, \(value_grad/.test(r.message)));
});

test('CP003 summed-loss pmean through an optax update is silent when the update sums and divides by the count', async () => {
  const fixed = submission(
    'from algorithmic_efficiency import spec',
    `(_, (n, _)), grads = grad_fn(shifted)
            n, grads = lax.psum((n, grads), axis_name=axis)
            grads = jax.tree_util.tree_map(lambda g: g / n, grads)`,
  );
  assert.deepEqual(summary(await analyze(fixed)), []);
});

test('CP003 summed-loss pmean is silent when nothing in view says who receives `optimizer_state`', async () => {
  // Without the algoperf API, `update_params` is a function no one in the file calls: its `optimizer_state` (and so
  // the update function called in `step`) could be anything.
  const text = submission('import numpy as np', 'grads = jax.lax.pmean(grads, axis_name=axis)');
  assert.deepEqual(summary(await analyze(text)), []);
});
