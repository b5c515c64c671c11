"""The local model: checking and converting model files, manifests, adapters, loading a session
(quantized or not), streaming and batched generation, fast decoding and the NF4 kernel hook.
"""

from app.assist.model.adapters import (
    ADAPTERS_DIR,
    AUTO,
    CARD_KEY,
    CARD_NAME,
    CONFIG_NAME,
    WEIGHTS_NAME,
    adapter_folder,
    adapters_root,
    check_adapter,
    check_name,
    list_adapters,
    read_card,
    recorded_source,
    resolve_adapter,
    seal,
)
from app.assist.model.answer import Answer, FinishReason, ParsedAnswer, parse_answer
from app.assist.model.batch import (
    BatchModel,
    BatchResult,
    KernelEnd,
    OnRowToken,
    Request,
    open_braces,
)
from app.assist.model.convert import (
    DEFAULT_GGUF_SHA256,
    DEFAULT_MODEL_NAME,
    convert_gguf,
    default_model_folder,
    find_default_gguf,
    import_folder,
    import_model,
    prepare_default_model,
    resolve_model,
)
from app.assist.model.fastdecode import (
    Choice,
    DecodeMode,
    Decoders,
    FastDecoder,
    cache_length,
    resolve_mode,
    run,
)
from app.assist.model.manifest import (
    MANIFEST_NAME,
    read_manifest,
    sha256_file,
    verify_manifest,
    write_manifest,
)
from app.assist.model.modelfiles import check_gguf, check_links, check_safetensors
from app.assist.model.quant import DEVICES, QUANTIZATIONS
from app.assist.model.safety import check_model_folder
from app.assist.model.session import (
    PREFILL_CHUNK,
    GenerationOptions,
    LoadReport,
    Message,
    ModelSession,
    cpu_threads,
)
from app.assist.model.streaming import TokenStream

__all__ = [
    "ADAPTERS_DIR", "AUTO", "CARD_KEY", "CARD_NAME", "CONFIG_NAME", "DEFAULT_GGUF_SHA256",
    "DEFAULT_MODEL_NAME", "DEVICES", "MANIFEST_NAME", "PREFILL_CHUNK", "QUANTIZATIONS",
    "WEIGHTS_NAME", "Answer", "BatchModel", "BatchResult", "Choice", "DecodeMode", "Decoders",
    "FastDecoder", "FinishReason", "GenerationOptions", "KernelEnd", "LoadReport", "Message",
    "ModelSession", "OnRowToken", "ParsedAnswer", "Request", "TokenStream", "adapter_folder",
    "adapters_root", "cache_length",
    "check_adapter", "check_gguf", "check_links", "check_model_folder", "check_name",
    "check_safetensors", "convert_gguf", "cpu_threads", "default_model_folder",
    "find_default_gguf", "import_folder", "import_model", "list_adapters", "open_braces",
    "parse_answer", "prepare_default_model", "read_card", "read_manifest", "recorded_source",
    "resolve_adapter", "resolve_mode", "resolve_model", "run", "seal", "sha256_file",
    "verify_manifest", "write_manifest"
]
