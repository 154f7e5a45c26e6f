# Fixed version of positive/knowledge_neurons_weight_edit.py.
# Source: https://github.com/Hunter-DDM/knowledge-neurons/issues/14 (no answer)
# Fix: edit the weights under torch.no_grad(); the later forward and backward are then an
#   ordinary training step on the edited model.
import torch
import torch.nn as nn

torch.manual_seed(0)


class BertOutput(nn.Module):
    def __init__(self, intermediate, hidden):
        super().__init__()
        self.dense = nn.Linear(intermediate, hidden)


class BertLayer(nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.intermediate = nn.Linear(hidden, intermediate)
        self.output = BertOutput(intermediate, hidden)

    def forward(self, x):
        return x + self.output.dense(torch.relu(self.intermediate(x)))


class Bert(nn.Module):
    def __init__(self, vocab=30, hidden=8, intermediate=16, layers=2):
        super().__init__()
        self.embeddings = nn.Module()
        self.embeddings.word_embeddings = nn.Embedding(vocab, hidden)
        self.encoder = nn.Module()
        self.encoder.layer = nn.ModuleList(BertLayer(hidden, intermediate) for _ in range(layers))

    def forward(self, input_ids):
        x = self.embeddings.word_embeddings(input_ids)
        for layer in self.encoder.layer:
            x = layer(x)
        return x @ self.embeddings.word_embeddings.weight.T


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.bert = Bert()


model = Model()
kn_bag = [[0, 3], [1, 7]]  # (layer, position) of the knowledge neurons
ori_pred_id, tgt_id = 4, 9
lambda_list_1 = [1.0, 1.0]
lambda_list_2 = [2.0, 2.0]
ori_pred_emb = model.bert.embeddings.word_embeddings.weight[ori_pred_id]
tgt_emb = model.bert.embeddings.word_embeddings.weight[tgt_id]
with torch.no_grad():  # [fix]
    for i, (layer, pos) in enumerate(kn_bag):
        model.bert.encoder.layer[layer].output.dense.weight[:, pos] -= ori_pred_emb * lambda_list_1[i]
        model.bert.encoder.layer[layer].output.dense.weight[:, pos] += tgt_emb * lambda_list_2[i]

logits = model.bert(torch.randint(0, 30, (1, 6)))
loss = nn.functional.cross_entropy(logits[0], torch.randint(0, 30, (6,)))
loss.backward()
print("loss", loss.item())
