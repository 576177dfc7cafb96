#!/usr/bin/env bash
# Lists candidate gradient-scaling fixes in every mirrored repository, so the search behind bugfix-pairs.json can be
# repeated on new mirrors. It only proposes commits: each one still has to be read (diff and message) and judged by
# hand before the checker is run on it, and most candidates are refactors, features or logged-metric changes.
#   scripts/primer/bugfix-search.sh [mirror-root (default /work/.mirror)] > candidates.txt
# Output: one line per candidate, "<query> <owner+name> <sha> <date> <subject>".
set -u
root="${1:-/work/.mirror}"

# Query 1: the message names a fix and a scale word, and the Python diff touches a reduction, the world size or
# gradient accumulation.
fix_words='fix|bug|wrong|correct|incorrect|mistake|should|properly'
scale_words='averag|world.?size|divid|divis|scal|accumul|psum|pmean|normali|reduce|sum|mean|loss|grad'
touched='all_reduce|allreduce|Allreduce|psum|pmean|world_size|get_world_size|accumulat|hvd\.size|num_items|lax\.p|/ *ngpu|n_gpu|nprocs'
# Query 2: the message itself speaks of the gradient's scale, with or without a fix word.
about_scale='grad[a-z]* .*(averag|divid|scal|sum|normali|world)|(averag|divid|scal|sum|normali)[a-z]* .*grad|pmean|psum|average.*(world|replica|worker|device|gpu)'
# Query 3: the diff adds or removes a division by a group size or an accumulation count, or an averaging reduction.
division='/=? *\(?(self\.|args\.|config\.)?(world_size|get_world_size\(\)|dist\.get_world_size\(\)|hvd\.size\(\)|num_replicas|n_gpus?|num_devices|device_count\(\)|gradient_accumulation_steps|accumulation_steps|num_microbatches|update_freq)|ReduceOp\.AVG|lax\.pmean|op=hvd\.Average|average=(True|False)'
# Query 4: the diff adds a backward() of a loss divided by an accumulation count (read the hunk: the fix is the one
# whose removed line backpropagated the undivided loss).
divided_backward='(/ *\(?[A-Za-z_.]*(accum|ACCUM|Accum|update_freq|micro|MICRO|grad_acc)[A-Za-z_]*\)?\)?\.backward|backward\([^)]*/ *[A-Za-z_.]*(accum|ACCUM|micro|update_freq|grad_acc))'

for dir in "$root"/*/; do
  name=$(basename "$dir")
  git_dir="$dir/repo"
  [ -d "$git_dir/.git" ] && git_dir="$git_dir/.git"
  [ -f "$git_dir/HEAD" ] || continue
  git --git-dir "$git_dir" log --format="q1 $name %h %ad %s" --date=short -i -E --all-match \
    --grep="$fix_words" --grep="$scale_words" -G"$touched" -- '*.py' 2>/dev/null
  git --git-dir "$git_dir" log --format="q2 $name %h %ad %s" --date=short -i -E --grep="$about_scale" -- '*.py' 2>/dev/null
  git --git-dir "$git_dir" log --no-merges --format="q3 $name %h %ad %s" --date=short -i -E --grep="$fix_words" \
    -G"$division" -- '*.py' 2>/dev/null
  git --git-dir "$git_dir" log --no-merges --format="q4 $name %h %ad %s" --date=short -E -G"$divided_backward" \
    -- '*.py' 2>/dev/null
done
