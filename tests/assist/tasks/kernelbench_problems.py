"""KernelBench-format problem files written for these tests (never copied from KernelBench): a
few per level, each small enough that its own sizes run in a moment on the CPU."""

from __future__ import annotations

import textwrap

HEADER = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"


def _problem(body: str) -> str:
    """A problem file: the imports, then the body."""
    return HEADER + textwrap.dedent(body)


# Level 1: a normalization with affine weights, a pooling (no weights), sizes in a tuple.
LEVEL1 = {
    "31_Group_Norm_Affine": _problem('''
        class Model(nn.Module):
            """Group normalization with its learned scale and shift."""
            def __init__(self, num_features: int, num_groups: int):
                super().__init__()
                self.norm = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

            def forward(self, x):
                return self.norm(x)

        batch_size = 6
        features = 32
        num_groups = 4
        dim1 = 10
        dim2 = 12

        def get_inputs():
            return [torch.randn(batch_size, features, dim1, dim2)]

        def get_init_inputs():
            return [features, num_groups]
    '''),
    "42_Max_Pool_Strided": _problem('''
        class Model(nn.Module):
            """2-D max pooling with a stride and padding."""
            def __init__(self, kernel_size, stride, padding):
                super().__init__()
                self.pool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

            def forward(self, x):
                return self.pool(x)

        batch_size = 4
        channels = 6
        height = width = 40
        kernel_size = 3
        stride = 2
        padding = 1

        def get_inputs():
            return [torch.rand(batch_size, channels, height, width)]

        def get_init_inputs():
            return [kernel_size, stride, padding]
    '''),
    "96_Smooth_L1_Shaped": _problem('''
        class Model(nn.Module):
            """Smooth L1 loss between two tensors."""
            def __init__(self):
                super().__init__()

            def forward(self, predictions, targets):
                return F.smooth_l1_loss(predictions, targets)

        batch_size = 64
        input_shape = (12, 20)

        def get_inputs():
            return [torch.randn(batch_size, *input_shape), torch.randn(batch_size, *input_shape)]

        def get_init_inputs():
            return []
    '''),
    "23_Softmax_Wide": _problem('''
        class Model(nn.Module):
            """Softmax over rows whose width is written in get_inputs."""
            def __init__(self):
                super().__init__()

            def forward(self, x):
                return torch.softmax(x, dim=1)

        batch_size = 16

        def get_inputs():
            return [torch.randn(batch_size, 300)]

        def get_init_inputs():
            return []
    '''),
}

# Level 2: a convolution with bias, then a fused tail; a Linear and its activation.
LEVEL2 = {
    "5_Conv2d_Tanh_AddBias": _problem('''
        class Model(nn.Module):
            """A convolution, tanh, then a learned per-channel bias."""
            def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
                super().__init__()
                self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
                self.bias = nn.Parameter(torch.randn(bias_shape) * 0.1)

            def forward(self, x):
                return torch.tanh(self.conv(x)) + self.bias

        batch_size = 4
        in_channels = 5
        out_channels = 8
        height, width = 18, 22
        kernel_size = 3
        bias_shape = (out_channels, 1, 1)

        def get_inputs():
            return [torch.rand(batch_size, in_channels, height, width)]

        def get_init_inputs():
            return [in_channels, out_channels, kernel_size, bias_shape]
    '''),
    "12_Gemm_GELU_Scale": _problem('''
        class Model(nn.Module):
            """y = gelu(x @ W^T + b) * scale."""
            def __init__(self, in_features, out_features, scale):
                super().__init__()
                self.linear = nn.Linear(in_features, out_features)
                self.scale = scale

            def forward(self, x):
                return F.gelu(self.linear(x)) * self.scale

        batch_size = 48
        in_features = 96
        out_features = 80
        scale = 1.5

        def get_inputs():
            return [torch.randn(batch_size, in_features)]

        def get_init_inputs():
            return [in_features, out_features, scale]
    '''),
}

# Level 3: a small network of submodules (convolutions, batch norm, PReLU, an embedding).
LEVEL3 = {
    "8_Tiny_ConvNet": _problem('''
        class Block(nn.Module):
            def __init__(self, channels_in, channels_out):
                super().__init__()
                self.conv = nn.Conv2d(channels_in, channels_out, 3, padding=1, bias=False)
                self.bn = nn.BatchNorm2d(channels_out)
                self.act = nn.PReLU()

            def forward(self, x):
                return self.act(self.bn(self.conv(x)))

        class Model(nn.Module):
            """Two conv blocks, pooling, a classifier head."""
            def __init__(self, num_classes, width):
                super().__init__()
                self.features = nn.Sequential(Block(3, width), nn.MaxPool2d(2),
                                              Block(width, 2 * width))
                self.head = nn.Linear(2 * width, num_classes)

            def forward(self, x):
                x = self.features(x)
                return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))

        batch_size = 3
        num_classes = 10
        width = 8
        image_size = 16

        def get_inputs():
            return [torch.rand(batch_size, 3, image_size, image_size)]

        def get_init_inputs():
            return [num_classes, width]
    '''),
    "44_Tiny_Token_Mixer": _problem('''
        class Model(nn.Module):
            """Embeds tokens, mixes them with attention-free MLPs, returns two outputs."""
            def __init__(self, vocab, embed_dim, hidden_size):
                super().__init__()
                self.embed = nn.Embedding(vocab, embed_dim)
                self.mlp = nn.Sequential(nn.Linear(embed_dim, hidden_size), nn.GELU(),
                                         nn.Linear(hidden_size, embed_dim))
                self.norm = nn.LayerNorm(embed_dim)
                self.register_buffer("causal", torch.tril(torch.ones(8, 8)))

            def forward(self, tokens):
                h = self.norm(self.embed(tokens))
                h = h + self.mlp(h)
                return h, h.mean(dim=1)

        batch_size = 4
        seq_len = 8
        vocab = 50
        embed_dim = 24
        hidden_size = 40

        def get_inputs():
            return [torch.randint(0, vocab, (batch_size, seq_len))]

        def get_init_inputs():
            return [vocab, embed_dim, hidden_size]
    '''),
}

ALL = {**{f"level1/{k}": v for k, v in LEVEL1.items()},
       **{f"level2/{k}": v for k, v in LEVEL2.items()},
       **{f"level3/{k}": v for k, v in LEVEL3.items()}}
