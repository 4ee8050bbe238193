"""The settings of each AutoML task (``type: automl`` steps), as azure-ai-ml 1.35 declares
them in its marshmallow schemas (``azure/ai/ml/_schema/automl/``): one model per task with its
keys, enums and nested settings. Written from those schemas by a script, kept as plain models;
the keys every AutoML step shares are in :mod:`mlpipe.schema.automl`."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mlpipe.schema.fields import BindingText, Bool, Float, Int, StrictModel, Text, one_of
from mlpipe.schema.sweep import (
    EarlyTermination,
    Normal,
    QNormal,
    QUniform,
    Randint,
    SamplingAlgorithm,
    Uniform,
)

LogVerbosity = Annotated[
    str, one_of("not_set", "debug", "info", "warning", "error", "critical", snake=True)
]
Mode = Annotated[str, one_of("download", "ro_mount", "eval_mount", "eval_download", "direct")]
Mode2 = Annotated[str, one_of("auto", "off", "custom")]
Transformers = Annotated[
    str,
    one_of(
        "text_target_encoder",
        "one_hot_encoder",
        "cat_target_encoder",
        "tf_idf",
        "wo_e_target_encoder",
        "label_encoder",
        "word_embedding",
        "naive_bayes",
        "count_vectorizer",
        "hash_one_hot_encoder",
        snake=True,
    ),
]
PrimaryMetric = Annotated[
    str,
    one_of(
        "auc_weighted",
        "accuracy",
        "norm_macro_recall",
        "average_precision_score_weighted",
        "precision_score_weighted",
        snake=True,
    ),
]
StackMetaLearnerType = Annotated[
    str,
    one_of(
        "none",
        "logistic_regression",
        "logistic_regression_cv",
        "light_gbm_classifier",
        "elastic_net",
        "elastic_net_cv",
        "light_gbm_regressor",
        "linear_regression",
        snake=True,
    ),
]
TrainingMode = Annotated[str, one_of("auto", "distributed", "non_distributed", snake=True)]
TrainingAlgorithms = Annotated[
    str,
    one_of(
        "logistic_regression",
        "sgd",
        "multinomial_naive_bayes",
        "bernoulli_naive_bayes",
        "svm",
        "linear_svm",
        "knn",
        "decision_tree",
        "random_forest",
        "extreme_random_trees",
        "light_gbm",
        "gradient_boosting",
        "xg_boost_classifier",
        snake=True,
    ),
]
PrimaryMetric2 = Annotated[
    str,
    one_of(
        "spearman_correlation",
        "normalized_root_mean_squared_error",
        "r2_score",
        "normalized_mean_absolute_error",
        snake=True,
    ),
]
TrainingAlgorithms2 = Annotated[
    str,
    one_of(
        "elastic_net",
        "gradient_boosting",
        "decision_tree",
        "knn",
        "lasso_lars",
        "sgd",
        "random_forest",
        "extreme_random_trees",
        "light_gbm",
        "xg_boost_regressor",
        snake=True,
    ),
]
TrainingAlgorithms3 = Annotated[
    str,
    one_of(
        "auto_arima",
        "prophet",
        "naive",
        "seasonal_naive",
        "average",
        "seasonal_average",
        "exponential_smoothing",
        "arimax",
        "tcn_forecaster",
        "elastic_net",
        "gradient_boosting",
        "decision_tree",
        "knn",
        "lasso_lars",
        "sgd",
        "random_forest",
        "extreme_random_trees",
        "light_gbm",
        "xg_boost_regressor",
        snake=True,
    ),
]
ShortSeriesHandlingConfig = Annotated[str, one_of("none", "auto", "pad", "drop")]
UseStl = Annotated[str, one_of("none", "season", "seasontrend")]
TargetAggregateFunction = Annotated[str, one_of("none", "sum", "max", "min", "mean")]
LearningRateScheduler = Annotated[str, one_of("none", "warmup_cosine", "step", snake=True)]
Optimizer = Annotated[str, one_of("none", "sgd", "adam", "adamw", snake=True)]
Task = Annotated[str, one_of("image_classification_multilabel", snake=True)]
PrimaryMetric3 = Annotated[
    str,
    one_of(
        "auc_weighted",
        "accuracy",
        "norm_macro_recall",
        "average_precision_score_weighted",
        "precision_score_weighted",
        "iou",
        snake=True,
    ),
]
ModelSize = Annotated[str, one_of("none", "small", "medium", "large", "extra_large", snake=True)]
ValidationMetricType = Annotated[str, one_of("none", "coco", "voc", "coco_voc", snake=True)]
LearningRateScheduler2 = Annotated[
    str,
    one_of(
        "none",
        "linear",
        "cosine",
        "cosine_with_restarts",
        "polynomial",
        "constant",
        "constant_with_warmup",
        snake=True,
    ),
]
Task2 = Annotated[str, one_of("text_classification_multilabel", snake=True)]


class MLTableInput(StrictModel):
    """azure-ai-ml's ``MLTableInputSchema``."""

    mode: Mode | None = None
    type: Annotated[str, one_of("mltable")] | None = None
    path: Text | None = None
    path_on_compute: Text | None = None
    datastore: Text | None = None


class AutoMLVertical(StrictModel):
    """azure-ai-ml's ``AutoMLVerticalSchema``."""

    environment_id: Text | None = None
    log_verbosity: LogVerbosity | None = None
    training_data: BindingText | MLTableInput = Field(
        description="The training data: an mltable input or a binding (azure-ai-ml cannot "
                    "build the job without it).")


class AutoMLTableLimits(StrictModel):
    """azure-ai-ml's ``AutoMLTableLimitsSchema``."""

    enable_early_termination: Bool | None = None
    exit_score: Float | None = None
    max_concurrent_trials: Int | None = None
    max_cores_per_trial: Int | None = None
    max_nodes: Int | None = None
    max_trials: Int | None = None
    timeout_minutes: Int | None = None
    trial_timeout_minutes: Int | None = None


class FeaturizationSettings(StrictModel):
    """azure-ai-ml's ``FeaturizationSettingsSchema``."""

    dataset_language: Text | None = None


class ColumnTransformer(StrictModel):
    """azure-ai-ml's ``ColumnTransformerSchema``."""

    fields: list[Text] | None = None
    parameters: dict[str, Float | Text] | None = None


class TableFeaturizationSettings(FeaturizationSettings):
    """azure-ai-ml's ``TableFeaturizationSettingsSchema``."""

    mode: Mode2 | None = None
    blocked_transformers: list[Transformers] | None = None
    column_name_and_types: dict[str, Text] | None = None
    transformer_params: dict[str, list[ColumnTransformer]] | None = None
    enable_dnn_featurization: Bool | None = None


class AutoMLTableVertical(AutoMLVertical):
    """azure-ai-ml's ``AutoMLTableVerticalSchema``."""

    limits: AutoMLTableLimits | None = None
    featurization: TableFeaturizationSettings | None = None
    target_column_name: Text
    validation_data: BindingText | MLTableInput | None = None
    validation_data_size: Float | None = None
    cv_split_column_names: list[Text] | None = None
    n_cross_validations: Annotated[str, one_of("auto")] | Int | None = None
    weight_column_name: Text | None = None
    test_data: BindingText | MLTableInput | None = None
    test_data_size: Float | None = None


class StackEnsembleSettings(StrictModel):
    """azure-ai-ml's ``StackEnsembleSettingsSchema``."""

    stack_meta_learner_kwargs: dict[str, Any] | None = None
    stack_meta_learner_train_percentage: Float | None = None
    stack_meta_learner_type: StackMetaLearnerType | None = None


class TrainingSettings(StrictModel):
    """azure-ai-ml's ``TrainingSettingsSchema``."""

    enable_dnn_training: Bool | None = None
    enable_model_explainability: Bool | None = None
    enable_onnx_compatible_models: Bool | None = None
    enable_stack_ensemble: Bool | None = None
    enable_vote_ensemble: Bool | None = None
    ensemble_model_download_timeout_minutes: Int | None = None
    stack_ensemble_settings: StackEnsembleSettings | None = None
    training_mode: TrainingMode | None = None


class ClassificationTrainingSettings(TrainingSettings):
    """azure-ai-ml's ``ClassificationTrainingSettingsSchema``."""

    allowed_training_algorithms: list[TrainingAlgorithms] | None = None
    blocked_training_algorithms: list[TrainingAlgorithms] | None = None


class ClassificationTask(AutoMLTableVertical):
    """azure-ai-ml's ``AutoMLClassificationNodeSchema``."""

    task: Annotated[str, one_of("classification", snake=True)]
    primary_metric: PrimaryMetric | None = None
    positive_label: Text | None = None
    training: ClassificationTrainingSettings | None = None


class RegressionTrainingSettings(TrainingSettings):
    """azure-ai-ml's ``RegressionTrainingSettingsSchema``."""

    allowed_training_algorithms: list[TrainingAlgorithms2] | None = None
    blocked_training_algorithms: list[TrainingAlgorithms2] | None = None


class RegressionTask(AutoMLTableVertical):
    """azure-ai-ml's ``AutoMLRegressionNodeSchema``."""

    task: Annotated[str, one_of("regression", snake=True)]
    primary_metric: PrimaryMetric2 | None = None
    training: RegressionTrainingSettings | None = None


class ForecastingTrainingSettings(TrainingSettings):
    """azure-ai-ml's ``ForecastingTrainingSettingsSchema``."""

    allowed_training_algorithms: list[TrainingAlgorithms3] | None = None
    blocked_training_algorithms: list[TrainingAlgorithms3] | None = None


class ForecastingSettings(StrictModel):
    """azure-ai-ml's ``ForecastingSettingsSchema``."""

    country_or_region_for_holidays: Text | None = None
    cv_step_size: Int | None = None
    forecast_horizon: Annotated[str, one_of("auto")] | Int | None = None
    target_lags: Annotated[str, one_of("auto")] | Int | list[Int] | None = None
    target_rolling_window_size: Annotated[str, one_of("auto")] | Int | None = None
    time_column_name: Text | None = None
    time_series_id_column_names: Text | list[Text] | None = None
    frequency: Text | None = None
    feature_lags: Annotated[str, one_of("none", "auto")] | None = None
    seasonality: Annotated[str, one_of("auto")] | Int | None = None
    short_series_handling_config: ShortSeriesHandlingConfig | None = None
    use_stl: UseStl | None = None
    target_aggregate_function: TargetAggregateFunction | None = None
    features_unknown_at_forecast_time: Text | list[Text] | None = None


class ForecastingTask(AutoMLTableVertical):
    """azure-ai-ml's ``AutoMLForecastingNodeSchema``."""

    task: Annotated[str, one_of("forecasting", snake=True)]
    primary_metric: PrimaryMetric2 | None = None
    training: ForecastingTrainingSettings | None = None
    forecasting: ForecastingSettings | None = None


class ImageLimits(StrictModel):
    """azure-ai-ml's ``ImageLimitsSchema``."""

    max_concurrent_trials: Int | None = None
    max_trials: Int | None = None
    timeout_minutes: Int | None = None


class ImageSweepSettings(StrictModel):
    """azure-ai-ml's ``ImageSweepSettingsSchema``."""

    sampling_algorithm: SamplingAlgorithm | None = None
    early_termination: EarlyTermination | None = None


class ImageVertical(AutoMLVertical):
    """azure-ai-ml's ``ImageVerticalSchema``."""

    limits: ImageLimits | None = None
    sweep: ImageSweepSettings | None = None
    target_column_name: Text
    test_data: BindingText | MLTableInput | None = None
    test_data_size: Float | None = None
    validation_data: BindingText | MLTableInput | None = None
    validation_data_size: Float | None = None


class ImageModelSettings(StrictModel):
    """azure-ai-ml's ``ImageModelSettingsSchema``."""

    ams_gradient: Bool | None = None
    advanced_settings: Text | None = None
    beta1: Float | None = None
    beta2: Float | None = None
    checkpoint_frequency: Int | None = None
    checkpoint_run_id: Text | None = None
    distributed: Bool | None = None
    early_stopping: Bool | None = None
    early_stopping_delay: Int | None = None
    early_stopping_patience: Int | None = None
    evaluation_frequency: Int | None = None
    enable_onnx_normalization: Bool | None = None
    gradient_accumulation_step: Int | None = None
    layers_to_freeze: Int | None = None
    learning_rate: Float | None = None
    learning_rate_scheduler: LearningRateScheduler | None = None
    model_name_: Text | None = Field(None, alias="model_name")
    momentum: Float | None = None
    nesterov: Bool | None = None
    number_of_epochs: Int | None = None
    number_of_workers: Int | None = None
    optimizer: Optimizer | None = None
    random_seed: Int | None = None
    step_lr_gamma: Float | None = None
    step_lr_step_size: Int | None = None
    training_batch_size: Int | None = None
    validation_batch_size: Int | None = None
    warmup_cosine_lr_cycles: Float | None = None
    warmup_cosine_lr_warmup_epochs: Int | None = None
    weight_decay: Float | None = None


class ImageModelSettingsClassification(ImageModelSettings):
    """azure-ai-ml's ``ImageModelSettingsClassificationSchema``."""

    training_crop_size: Int | None = None
    validation_crop_size: Int | None = None
    validation_resize_size: Int | None = None
    weighted_loss: Int | None = None


class BoolChoice(StrictModel):
    """azure-ai-ml's ``CustomChoiceSchema``."""

    values: list[Bool] | None = None
    type: Annotated[str, one_of("choice")]


class TextChoice(StrictModel):
    """azure-ai-ml's ``CustomChoiceSchema``."""

    values: list[Text] | None = None
    type: Annotated[str, one_of("choice")]


class IntChoice(StrictModel):
    """azure-ai-ml's ``CustomChoiceSchema``."""

    values: list[Int] | None = None
    type: Annotated[str, one_of("choice")]


class FloatChoice(StrictModel):
    """azure-ai-ml's ``CustomChoiceSchema``."""

    values: list[Float] | None = None
    type: Annotated[str, one_of("choice")]


class IntegerQUniform(StrictModel):
    """azure-ai-ml's ``IntegerQUniformSchema``."""

    type: Annotated[str, one_of("quniform", "qloguniform")]
    min_value: Int
    max_value: Int
    q: Int


class IntegerQNormal(StrictModel):
    """azure-ai-ml's ``IntegerQNormalSchema``."""

    type: Annotated[str, one_of("qnormal", "qlognormal")]
    mu: Int
    sigma: Int
    q: Int


class NoneWarmupCosineChoice(StrictModel):
    """azure-ai-ml's ``CustomChoiceSchema``."""

    values: list[LearningRateScheduler] | None = None
    type: Annotated[str, one_of("choice")]


class NoneSgdChoice(StrictModel):
    """azure-ai-ml's ``CustomChoiceSchema``."""

    values: list[Optimizer] | None = None
    type: Annotated[str, one_of("choice")]


class ImageModelDistributionSettings(StrictModel):
    """azure-ai-ml's ``ImageModelDistributionSettingsSchema``."""

    ams_gradient: BoolChoice | Bool | None = None
    augmentations: TextChoice | Text | None = None
    beta1: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None
    beta2: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None
    distributed: BoolChoice | Bool | None = None
    early_stopping: BoolChoice | Bool | None = None
    early_stopping_delay: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = None
    early_stopping_patience: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = (
        None
    )
    evaluation_frequency: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = None
    enable_onnx_normalization: BoolChoice | Bool | None = None
    gradient_accumulation_step: (
        Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None
    ) = None
    layers_to_freeze: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = None
    learning_rate: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None
    learning_rate_scheduler: NoneWarmupCosineChoice | LearningRateScheduler | None = None
    momentum: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None
    nesterov: BoolChoice | Bool | None = None
    number_of_epochs: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = None
    number_of_workers: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = None
    optimizer: NoneSgdChoice | Optimizer | None = None
    random_seed: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = None
    step_lr_gamma: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None
    step_lr_step_size: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = None
    training_batch_size: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = None
    validation_batch_size: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = (
        None
    )
    warmup_cosine_lr_cycles: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None
    warmup_cosine_lr_warmup_epochs: (
        Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None
    ) = None
    weight_decay: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None


class ImageModelDistributionSettingsClassification(ImageModelDistributionSettings):
    """azure-ai-ml's ``ImageModelDistributionSettingsClassificationSchema``."""

    model_name_: TextChoice | Text | None = Field(None, alias="model_name")
    training_crop_size: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = None
    validation_crop_size: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = None
    validation_resize_size: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = (
        None
    )
    weighted_loss: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = None


class ImageClassificationBase(ImageVertical):
    """azure-ai-ml's ``ImageClassificationBaseSchema``."""

    training_parameters: ImageModelSettingsClassification | None = None
    search_space: list[ImageModelDistributionSettingsClassification] | None = None


class ImageClassificationTask(ImageClassificationBase):
    """azure-ai-ml's ``ImageClassificationMulticlassNodeSchema``."""

    task: Annotated[str, one_of("image_classification", snake=True)]
    primary_metric: PrimaryMetric | None = None


class ImageClassificationMultilabelTask(ImageClassificationBase):
    """azure-ai-ml's ``ImageClassificationMultilabelNodeSchema``."""

    task: Task
    primary_metric: PrimaryMetric3 | None = None


class ImageModelSettingsObjectDetection(ImageModelSettings):
    """azure-ai-ml's ``ImageModelSettingsObjectDetectionSchema``."""

    box_detections_per_image: Int | None = None
    box_score_threshold: Float | None = None
    image_size: Int | None = None
    max_size: Int | None = None
    min_size: Int | None = None
    model_size_: ModelSize | None = Field(None, alias="model_size")
    multi_scale: Bool | None = None
    nms_iou_threshold: Float | None = None
    tile_grid_size: Text | None = None
    tile_overlap_ratio: Float | None = None
    tile_predictions_nms_threshold: Float | None = None
    validation_iou_threshold: Float | None = None
    validation_metric_type: ValidationMetricType | None = None
    log_training_metrics: Text | None = None
    log_validation_loss: Text | None = None


class NoneSmallChoice(StrictModel):
    """azure-ai-ml's ``CustomChoiceSchema``."""

    values: list[ModelSize] | None = None
    type: Annotated[str, one_of("choice")]


class NoneCocoChoice(StrictModel):
    """azure-ai-ml's ``CustomChoiceSchema``."""

    values: list[ValidationMetricType] | None = None
    type: Annotated[str, one_of("choice")]


class ImageModelDistributionSettingsDetectionCommon(ImageModelDistributionSettings):
    """azure-ai-ml's ``ImageModelDistributionSettingsDetectionCommonSchema``."""

    box_detections_per_image: (
        Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None
    ) = None
    box_score_threshold: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None
    image_size: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = None
    max_size: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = None
    min_size: Int | IntChoice | Randint | IntegerQUniform | IntegerQNormal | None = None
    model_size_: NoneSmallChoice | ModelSize | None = Field(None, alias="model_size")
    multi_scale: BoolChoice | Bool | None = None
    nms_iou_threshold: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None
    tile_grid_size: TextChoice | Text | None = None
    tile_overlap_ratio: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None
    tile_predictions_nms_threshold: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None
    validation_iou_threshold: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None
    validation_metric_type: NoneCocoChoice | ValidationMetricType | None = None


class ImageModelDistributionSettingsObjectDetection(ImageModelDistributionSettingsDetectionCommon):
    """azure-ai-ml's ``ImageModelDistributionSettingsObjectDetectionSchema``."""

    model_name_: TextChoice | Text | None = Field(None, alias="model_name")


class ImageObjectDetectionTask(ImageVertical):
    """azure-ai-ml's ``ImageObjectDetectionNodeSchema``."""

    task: Annotated[str, one_of("image_object_detection", snake=True)]
    primary_metric: Annotated[str, one_of("mean_average_precision", snake=True)] | None = None
    training_parameters: ImageModelSettingsObjectDetection | None = None
    search_space: list[ImageModelDistributionSettingsObjectDetection] | None = None


class ImageModelDistributionSettingsInstanceSegmentation(
    ImageModelDistributionSettingsDetectionCommon
):
    """azure-ai-ml's ``ImageModelDistributionSettingsInstanceSegmentationSchema``."""

    model_name_: TextChoice | Text | None = Field(None, alias="model_name")


class ImageInstanceSegmentationTask(ImageVertical):
    """azure-ai-ml's ``ImageInstanceSegmentationNodeSchema``."""

    task: Annotated[str, one_of("image_instance_segmentation", snake=True)]
    primary_metric: Annotated[str, one_of("mean_average_precision", snake=True)] | None = None
    training_parameters: ImageModelSettingsObjectDetection | None = None
    search_space: list[ImageModelDistributionSettingsInstanceSegmentation] | None = None


class NlpLimits(StrictModel):
    """azure-ai-ml's ``NlpLimitsSchema``."""

    max_concurrent_trials: Int | None = None
    max_trials: Int | None = None
    max_nodes: Int | None = None
    timeout_minutes: Int | None = None
    trial_timeout_minutes: Int | None = None


class NlpSweepSettings(StrictModel):
    """azure-ai-ml's ``NlpSweepSettingsSchema``."""

    sampling_algorithm: SamplingAlgorithm | None = None
    early_termination: EarlyTermination | None = None


class NlpFixedParameters(StrictModel):
    """azure-ai-ml's ``NlpFixedParametersSchema``."""

    gradient_accumulation_steps: Int | None = None
    learning_rate: Float | None = None
    learning_rate_scheduler: LearningRateScheduler2 | None = None
    model_name_: Text | None = Field(None, alias="model_name")
    number_of_epochs: Int | None = None
    training_batch_size: Int | None = None
    validation_batch_size: Int | None = None
    warmup_ratio: Float | None = None
    weight_decay: Float | None = None


class NoneLinearChoice(StrictModel):
    """azure-ai-ml's ``CustomChoiceSchema``."""

    values: list[LearningRateScheduler2] | None = None
    type: Annotated[str, one_of("choice")]


class NlpParameterSubspace(StrictModel):
    """azure-ai-ml's ``NlpParameterSubspaceSchema``."""

    gradient_accumulation_steps: Int | IntChoice | Randint | None = None
    learning_rate: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None
    learning_rate_scheduler: LearningRateScheduler2 | NoneLinearChoice | None = None
    model_name_: Text | TextChoice | None = Field(None, alias="model_name")
    number_of_epochs: Int | IntChoice | Randint | None = None
    training_batch_size: Int | IntChoice | Randint | None = None
    validation_batch_size: Int | IntChoice | Randint | None = None
    warmup_ratio: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None
    weight_decay: (
        Float
        | Int
        | IntChoice
        | FloatChoice
        | Uniform
        | QUniform
        | Normal
        | QNormal
        | Randint
        | None
    ) = None


class NlpFeaturizationSettings(StrictModel):
    """azure-ai-ml's ``NlpFeaturizationSettingsSchema``."""

    dataset_language: Text | None = None


class NlpVertical(AutoMLVertical):
    """azure-ai-ml's ``NlpVerticalSchema``."""

    limits: NlpLimits | None = None
    sweep: NlpSweepSettings | None = None
    training_parameters: NlpFixedParameters | None = None
    search_space: list[NlpParameterSubspace] | None = None
    featurization: NlpFeaturizationSettings | None = None
    validation_data: BindingText | MLTableInput | None = None


class TextClassificationTask(NlpVertical):
    """azure-ai-ml's ``AutoMLTextClassificationNode``."""

    task: Annotated[str, one_of("text_classification", snake=True)]
    primary_metric: PrimaryMetric | None = None
    target_column_name: Text


class TextClassificationMultilabelTask(NlpVertical):
    """azure-ai-ml's ``AutoMLTextClassificationMultilabelNode``."""

    task: Task2
    primary_metric: Annotated[str, one_of("accuracy", snake=True)] | None = None
    target_column_name: Text


class TextNerTask(NlpVertical):
    """azure-ai-ml's ``AutoMLTextNerNode``."""

    task: Annotated[str, one_of("text_ner", snake=True)]
    primary_metric: Annotated[str, one_of("accuracy", snake=True)] | None = None
    target_column_name: Text | None = None


AUTOML_TASKS: dict[str, type[StrictModel]] = {
    "classification": ClassificationTask,
    "regression": RegressionTask,
    "forecasting": ForecastingTask,
    "image_classification": ImageClassificationTask,
    "image_classification_multilabel": ImageClassificationMultilabelTask,
    "image_object_detection": ImageObjectDetectionTask,
    "image_instance_segmentation": ImageInstanceSegmentationTask,
    "text_classification": TextClassificationTask,
    "text_classification_multilabel": TextClassificationMultilabelTask,
    "text_ner": TextNerTask,
}
