# Mirrors: huggingface/transformers, src/transformers/data/data_collator.py
#   (DataCollatorForLanguageModeling.torch_mask_tokens: probability_matrix.masked_fill_,
#   labels[~masked_indices] = -100, inputs[indices_replaced] = mask_token_id, ...)
# Safe in-place ops: masked_fill_ and index writes on token ids, labels and probability
#   masks, none of which requires grad; an MLM training step follows.
import torch
import torch.nn as nn

torch.manual_seed(0)

mask_token_id, vocab_size, mlm_probability = 3, 40, 0.15
special_ids = (0, 1, 2)


def torch_mask_tokens(inputs, special_tokens_mask=None):
    labels = inputs.clone()
    # We sample a few tokens in each sequence for MLM training (with probability `self.mlm_probability`)
    probability_matrix = torch.full(labels.shape, mlm_probability)
    if special_tokens_mask is None:
        special_tokens_mask = sum(labels == i for i in special_ids).bool()
    probability_matrix.masked_fill_(special_tokens_mask, value=0.0)
    masked_indices = torch.bernoulli(probability_matrix).bool()
    labels[~masked_indices] = -100  # We only compute loss on masked tokens

    # 80% of the time, we replace masked input tokens with tokenizer.mask_token ([MASK])
    indices_replaced = torch.bernoulli(torch.full(labels.shape, 0.8)).bool() & masked_indices
    inputs[indices_replaced] = mask_token_id

    # 10% of the time, we replace masked input tokens with random word
    indices_random = torch.bernoulli(torch.full(labels.shape, 0.5)).bool() & masked_indices & ~indices_replaced
    random_words = torch.randint(vocab_size, labels.shape, dtype=torch.long)
    inputs[indices_random] = random_words[indices_random]
    return inputs, labels


model = nn.Sequential(nn.Embedding(vocab_size, 16), nn.Linear(16, 16), nn.GELU(), nn.Linear(16, vocab_size))
input_ids = torch.randint(4, vocab_size, (4, 12))
input_ids[:, 0] = 1
input_ids[:, -1] = 2
inputs, labels = torch_mask_tokens(input_ids.clone())
logits = model(inputs)
loss = nn.functional.cross_entropy(logits.view(-1, vocab_size), labels.view(-1), ignore_index=-100)
loss.backward()
print("loss", loss.item())
