# Fixed version of positive/swift_plain_text_dummy_image.py.
# Source: https://github.com/modelscope/ms-swift/issues/4613
# Fix: the usual one: add the zero-weighted image term out of place, so the leaf that
#   the input-require-grads hook made is never written.
import torch
import torch.nn as nn

torch.manual_seed(0)

VOCAB, HIDDEN, PATCH_DIM = 32, 16, 12


class Qwen2_5_VLModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.visual = nn.Linear(PATCH_DIM, HIDDEN)
        self.layers = nn.Linear(HIDDEN, HIDDEN)
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self.embed_tokens.register_forward_hook(make_inputs_require_grads)

    def forward(self, inputs_embeds):
        return self.lm_head(torch.tanh(self.layers(inputs_embeds)))


class Qwen2VLTemplate:
    is_training = True

    def _post_encode(self, model, inputs):
        if not self.is_training:
            return inputs
        input_ids = inputs["input_ids"]
        pixel_values = inputs.get("pixel_values")
        inputs_embeds = model.embed_tokens(input_ids)
        if pixel_values is None:  # plain text: run the vision tower on a dummy image
            pixel_values = torch.zeros(4, PATCH_DIM)
            image_embeds = model.visual(pixel_values)
            inputs_embeds = inputs_embeds + image_embeds.mean() * 0.  # [fix]
        return {"inputs_embeds": inputs_embeds}


model = Qwen2_5_VLModel()
model.embed_tokens.weight.requires_grad_(False)
model.enable_input_require_grads()
template = Qwen2VLTemplate()
input_ids = torch.randint(0, VOCAB, (2, 8))
labels = torch.randint(0, VOCAB, (2, 8))
logits = model(**template._post_encode(model, {"input_ids": input_ids}))
loss = nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())
loss.backward()
print("loss", loss.item())
