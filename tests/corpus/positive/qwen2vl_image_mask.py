# Source: https://github.com/huggingface/optimum-habana/pull/1970
# Report: fine-tuning Qwen2-VL failed in modeling_qwen2_vl.py's forward at
#   `inputs_embeds[image_mask] = image_embeds`: "a view of a leaf Variable that requires
#   grad is being used in an in-place operation". With the language model frozen (LoRA)
#   and gradient checkpointing on, transformers' enable_input_require_grads() registers a
#   forward hook on the input embeddings that calls output.requires_grad_(True): the
#   embeddings of a frozen nn.Embedding become a leaf that requires grad, and scattering
#   the image features into them by index is an in-place write on that leaf.
# In-place op: line 48 (`inputs_embeds[image_mask] = image_embeds`).
# Saved by: nothing; the target is a leaf that requires grad.
# Fix: fixed/qwen2vl_image_mask.py, the usual one (the thread quotes no diff): merge the
#   image features out of place with masked_scatter, as transformers' Qwen2-VL does.
# Shrunk: a two-layer stand-in for the vision tower and the language model, tiny sizes,
#   random token ids with a few image tokens.
import torch
import torch.nn as nn

torch.manual_seed(0)

VOCAB, HIDDEN, PATCH_DIM, IMAGE_TOKEN_ID = 32, 16, 12, 31


class Qwen2VLForConditionalGeneration(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.visual = nn.Sequential(nn.Linear(PATCH_DIM, HIDDEN), nn.GELU(),
                                    nn.Linear(HIDDEN, HIDDEN))
        self.layers = nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.SiLU())
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)
        self.image_token_id = IMAGE_TOKEN_ID

    def get_input_embeddings(self):
        return self.embed_tokens

    def enable_input_require_grads(self):
        # transformers' PreTrainedModel.enable_input_require_grads
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(
            make_inputs_require_grads)

    def forward(self, input_ids, pixel_values, labels):
        inputs_embeds = self.embed_tokens(input_ids)
        image_embeds = self.visual(pixel_values)
        image_mask = input_ids == self.image_token_id
        inputs_embeds[image_mask] = image_embeds  # [inplace]
        logits = self.lm_head(self.layers(inputs_embeds))
        return nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())


model = Qwen2VLForConditionalGeneration()
for p in model.embed_tokens.parameters():  # the frozen base model (LoRA training)
    p.requires_grad_(False)
model.enable_input_require_grads()  # what gradient checkpointing switches on

input_ids = torch.randint(0, 30, (2, 10))
input_ids[:, 1:4] = IMAGE_TOKEN_ID
pixel_values = torch.randn(6, PATCH_DIM)  # one row per image token
labels = torch.randint(0, VOCAB, (2, 10))
loss = model(input_ids, pixel_values, labels)
loss.backward()
print("loss", loss.item())
