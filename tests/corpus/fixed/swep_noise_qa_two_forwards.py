# Fixed version of positive/swep_noise_qa_two_forwards.py.
# Source: https://github.com/seanie12/SWEP/issues/3 (the reporter's fix).
# Fix: the perturbed and the clean embeddings go through the model in one call, with the
#   labels concatenated: each label tensor is clamped once, before the loss saves it.
import torch
from transformers import RemBertConfig, RemBertForQuestionAnswering

torch.manual_seed(0)
config = RemBertConfig(vocab_size=100, input_embedding_size=8, hidden_size=16,
                       num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
                       output_embedding_size=8, max_position_embeddings=32)
qa_model = RemBertForQuestionAnswering(config)
embeddings = qa_model.get_input_embeddings()
optimizer = torch.optim.AdamW(qa_model.parameters(), lr=1e-4)

input_ids = torch.randint(0, 100, (4, 12))
attention_mask = torch.ones_like(input_ids)
start_positions = torch.tensor([1, 3, 40, 5])  # one answer lies outside the window
end_positions = torch.tensor([2, 6, 40, 9])

inputs_embeds = embeddings(input_ids)
noise = 1 + 0.1 * torch.randn_like(inputs_embeds)
total_inputs_embeds = torch.cat([inputs_embeds * noise, inputs_embeds], 0)  # [fix]
outputs = qa_model(inputs_embeds=total_inputs_embeds,
                   attention_mask=torch.cat([attention_mask, attention_mask], 0),
                   start_positions=torch.cat([start_positions, start_positions], 0),
                   end_positions=torch.cat([end_positions, end_positions], 0))
loss = 2 * outputs.loss
optimizer.zero_grad()
loss.backward()
optimizer.step()
print("loss", loss.item())
