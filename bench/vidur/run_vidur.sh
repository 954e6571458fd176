#!/usr/bin/env bash
# Vidur on the Vidur comparison's scenario (bench/configs/vidur-azure-conv-llama2-7b-a100.yaml):
# one Llama-2-7B replica on an A100, TP1, Vidur's vLLM scheduler with the config's limits (256
# sequences, 4,096 tokens a batch, 16-token blocks), its random-forest predictor, plots and traces
# off. bench/vidur_side_by_side.py runs it; docs/performance.md ("Vidur, side by side") gives the
# set-up (VIDUR_SRC: a Vidur checkout with the A100 Llama-2-7B profiles; Debian's Python packages;
# bench/vidur/pylib on PYTHONPATH for the two Vidur imports Debian lacks).
#   usage: VIDUR_SRC=DIR [VIDUR_CACHE=DIR] run_vidur.sh TRACE_CSV OUT_DIR
set -euo pipefail
trace=$(realpath "$1") out=$(realpath -m "$2")
here=$(cd "$(dirname "$0")" && pwd)
cd "${VIDUR_SRC:?give VIDUR_SRC, a Vidur checkout}"
export PYTHONPATH="$here/pylib:$VIDUR_SRC${PYTHONPATH:+:$PYTHONPATH}"
exec /usr/bin/python3 -m vidur.main \
  --replica_config_device a100 \
  --replica_config_network_device a100_pairwise_nvlink \
  --replica_config_model_name meta-llama/Llama-2-7b-hf \
  --cluster_config_num_replicas 1 \
  --replica_config_tensor_parallel_size 1 \
  --replica_config_num_pipeline_stages 1 \
  --request_generator_config_type trace_replay \
  --trace_request_generator_config_trace_file "$trace" \
  --trace_request_generator_config_max_tokens 4096 \
  --replica_scheduler_config_type vllm \
  --vllm_scheduler_config_batch_size_cap 256 \
  --vllm_scheduler_config_max_tokens_in_batch 4096 \
  --vllm_scheduler_config_block_size 16 \
  --execution_time_predictor_config_type random_forrest \
  --random_forrest_execution_time_predictor_config_prediction_max_prefill_chunk_size 4096 \
  --random_forrest_execution_time_predictor_config_prediction_max_batch_size 256 \
  --random_forrest_execution_time_predictor_config_prediction_max_tokens_per_request 4096 \
  --no-metrics_config_store_plots \
  --no-metrics_config_enable_chrome_trace \
  --no-metrics_config_write_json_trace \
  --metrics_config_output_dir "$out" \
  --metrics_config_cache_dir "${VIDUR_CACHE:-$out/cache}"
