# Fixed version of positive/qwen2vl_image_mask.py.
# Source: https://github.com/huggingface/optimum-habana/pull/1970
# Fix: the usual one (the thread quotes no diff): merge the image features out of place
#   with masked_scatter, as transformers' Qwen2-VL does, instead of writing into the
#   embeddings, which the input-require-grads hook made a leaf that requires grad.
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
        image_mask = (input_ids == self.image_token_id).unsqueeze(-1).expand_as(inputs_embeds)
        inputs_embeds = inputs_embeds.masked_scatter(image_mask, image_embeds)  # [fix]
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
