"""Component: Gecko scores per question and row, all error rows, and dataset metrics."""

from typing import NamedTuple

from kfp import dsl
from kfp.dsl import Artifact, Dataset, Input, Metrics, Output

from autorater_pipelines.components import IMAGE


@dsl.component(base_image=IMAGE, install_kfp_package=False)
def score_gecko_validations(
    validations: Input[Dataset],
    rubric_errors: Input[Dataset],
    validation_errors: Input[Dataset],
    id_columns: list,
    scoring: dict,
    response_columns: dict,
    rubric_prompt_version: str,
    results: Output[Dataset],
    error_messages: Output[Dataset],
    gecko_metrics: Output[Metrics],
    metrics_json: Output[Artifact],
) -> NamedTuple("Outputs", evaluation_count=int, rows_scored=int):
    """Scores every question by normalized exact match of the voted verdict with the expected answer, each row by the mean question score, and aggregates.

    Args:
        validations: JSONL of validation rows from the validator step.
        rubric_errors: JSONL of error rows from the rubric step.
        validation_errors: JSONL of error rows from the validator step.
        id_columns: Columns whose values identify each row.
        scoring: `dependency_masking` (score 0 when a parent question is wrong, DSG), `logprob_weighting` (score = probability of the expected answer), `missing_answer_policy` (`error`, `zero` or `skip`), `unparseable_answer_policy` (`skip` or `zero`).
        response_columns: `{candidate name: column}` of a run comparing candidates (empty: one response column): rows are scored per prompt and candidate.
        rubric_prompt_version: The rubric step's prompt version, recorded in metrics_json.

    Returns:
        results: JSONL, one row per scored dataset row: dataset columns, `keywords`, `qa_results` (question_id, question, question_type, expected, verdict, score, status, raw, votes), `final_score`, `keyword_coverage`, `questions_scored`, `parse_failures`.
        error_messages: JSONL of every row that failed at any stage (ids, `stage`, `error_kind`, `error_message`), and rows scored under a lenient missing_answer_policy (`handled_as`).
        gecko_metrics: Numeric metrics shown in the Vertex AI console: `mean_final_score`, `stdev_final_score`, `rows_scored`, `rows_unscored`, `parse_failures`, `questions_scored`, `accuracy_<question type>`.
        metrics_json: All metrics as one JSON object, including `rubric_prompt_version`, with response_columns `candidates` (each candidate's metrics: `mean_score`, `stdev_score`, `pass_rate` …), `win_rates` (per prompt the highest score wins, an equal highest is a tie) and `per_rubric_comparison` (per pair of candidates, the rubrics one passes and the other fails), `accuracy_by_question_type`, `questions_by_question_type`, `unscored_rows_by_stage`, the scoring options and `final_score_denominator` (which questions final_score averages over).
        evaluation_count: Number of dataset rows (scored or not).
        rows_scored: Number of rows with a final_score.
    """
    from autorater_pipelines.gecko import steps as gecko_steps

    metrics = gecko_steps.score_validations(
        validations_path=validations.path,
        id_columns=id_columns,
        scoring=scoring,
        earlier_error_paths=[rubric_errors.path, validation_errors.path],
        results_path=results.path,
        error_messages_path=error_messages.path,
        metrics_path=metrics_json.path,
        response_columns=response_columns,
        rubric_prompt_version=rubric_prompt_version,
    )
    for name, value in gecko_steps.console_metrics(metrics).items():
        gecko_metrics.log_metric(name, value)
    return (metrics["evaluation_count"], metrics["rows_scored"])
